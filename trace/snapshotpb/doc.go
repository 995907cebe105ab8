// Package snapshotpb holds SnapshotPairs, a node's clock snapshots (pairs of
// host clock S and tracer clock R readings taken back to back), generated
// from snapshot.proto into snapshot.pb.go.
//
// Do not edit snapshot.pb.go: change snapshot.proto and run `make proto`;
// `make proto-check` fails when the committed file is stale.
//
// Clock readings are int64, not the uint64 of the origin plan, because
// simulated clocks, and real clocks with an injected offset, can read
// negative.
package snapshotpb
