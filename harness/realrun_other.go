//go:build !linux

package harness

import (
	"bufio"
	"fmt"

	"github.com/chronosync/chronosync/scenario"
)

// newReal refuses: the real backend needs Linux (network namespaces,
// kernel timestamps).
func newReal(sc *scenario.Scenario, _ *scenario.Resolved, _ Options, _ protocol, _ *bufio.Writer, _ *tracker) (backend, error) {
	return backend{}, fmt.Errorf("run %s --backend=real: the real backend runs only on Linux; run it with --backend=sim here", sc.Name)
}
