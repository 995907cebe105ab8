package scenario

// Size limits of a scenario, whatever the machine: beyond them a scenario
// is refused by Validate, before anything is built for it. Whether one
// within them fits the machine's memory is the runner's to say (the
// harness estimates it from EdgeCount before it builds a world).
const (
	// MaxNodes is the most nodes a scenario may have.
	MaxNodes = 1 << 22
	// MaxEdges is the most directed topology edges a scenario may have
	// (a full mesh of n nodes has n·(n−1)).
	MaxEdges = 1 << 26
)

// EdgeCount returns how many directed edges the scenario's topology has,
// computed from its kind and node count without building it (0 for an
// unknown kind or a node count out of range).
func (s *Scenario) EdgeCount() int64 {
	n := int64(s.Nodes)
	if n < 1 || n > MaxNodes {
		return 0
	}
	switch s.Topology.Kind {
	case FullMesh:
		return n * (n - 1)
	case Ring:
		if n == 2 {
			return 2
		}
		if n < 2 {
			return 0
		}
		return 2 * n
	case Star:
		return 2 * (n - 1)
	case RandomRegular:
		return n * int64(s.Topology.Degree)
	}
	return 0
}
