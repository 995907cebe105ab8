package combine

import "fmt"

// processLabel is how exports (Chrome JSON, Perfetto) name a plane of a
// node: "node 1 (host-b) /device:GPU:0", its node, its host's name and
// the plane's name in the node's own trace; "node 1 /device:GPU:0" when
// the host's name is not known.
func processLabel(node int, host, orig string) string {
	if host == "" {
		return fmt.Sprintf("node %d %s", node, orig)
	}
	return fmt.Sprintf("node %d (%s) %s", node, host, orig)
}
