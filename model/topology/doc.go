// Package topology generates the directed graphs of a simulated network of
// n nodes with IDs 0..n-1.
//
// # Decisions
//
//   - Every generator returns ([]Edge, error), so bad arguments get an error
//     that quotes them (wrapping [ErrInvalid]) instead of a panic or a
//     silently empty graph.
//   - Undirected graphs (ring, star, random regular) are emitted with both
//     directions, since links are per direction in the simulator.
//   - Outputs are sorted by From, then To, and contain no self loops or
//     duplicates; nothing depends on map iteration order.
//   - [RandomRegular] starts from a circulant k-regular graph and applies
//     random degree-preserving double-edge switches (10 per edge), which
//     always succeeds when the graph exists and gives an approximately
//     uniform random simple k-regular graph. For k > (n−1)/2 it randomizes
//     the sparser complement instead and complements the result. All draws
//     come from the caller's *rand.Rand, so the same stream state gives the
//     same graph.
//   - Sizes are not capped: FullMesh is quadratic in n.
package topology
