package scenario_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/probe"
	"github.com/chronosync/chronosync/rounds"
	"github.com/chronosync/chronosync/scenario"
)

// TestWorkloadPortClashes checks that the ports a training or phasegap
// workload may not use are the sync protocol's own: probe.Port and
// rounds.Port.
func TestWorkloadPortClashes(t *testing.T) {
	for _, head := range []string{
		"protocol: {kind: sync}\nworkload:\n  kind: training\n",
		"protocol: {kind: none}\nworkload:\n  kind: phasegap\n",
	} {
		for _, port := range []uint16{probe.Port, rounds.Port} {
			file := "name: t\nduration: 10s\nnodes: 2\n" + head + "  port: " + strconv.Itoa(int(port)) + "\n"
			_, err := scenario.Parse("x.yaml", []byte(file))
			want := "x.yaml:7: workload.port: port " + strconv.Itoa(int(port)) + " is a port of the sync protocol"
			if err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("%sport %d: Parse: %v\nwant prefix %q", head, port, err, want)
			}
		}
	}
}
