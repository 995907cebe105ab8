//go:build !linux

package harness

import (
	"bufio"
	"fmt"

	"github.com/chronosync/chronosync/scenario"
)

// newRealBackend refuses: the real backend needs Linux (network
// namespaces, kernel timestamps).
func newRealBackend(sc *scenario.Scenario, _ *scenario.Resolved, _ Options, _ protocol, _ *bufio.Writer, _ *tracker) (backend, error) {
	return nil, fmt.Errorf("run %s --backend=real: the real backend runs only on Linux; run it with --backend=sim here", sc.Name)
}
