//go:build !linux

package harness

import (
	"bufio"
	"errors"
	"fmt"

	"github.com/chronosync/chronosync/scenario"
)

func runReal(sc *scenario.Scenario, _ *scenario.Resolved, _ string, _ Options, _ protocol, _ *bufio.Writer, _ []Artifact, _ []byte, _ *tracker) (*Result, error) {
	return nil, fmt.Errorf("run %s --backend=real: %w", sc.Name, errors.New("the real backend runs only on Linux; run it with --backend=sim here"))
}
