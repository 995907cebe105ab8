package scenario_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/probe"
	"github.com/chronosync/chronosync/rounds"
	"github.com/chronosync/chronosync/scenario"
)

// TestTrainingPortClashes checks that the ports a training workload may not
// use are the sync protocol's own: probe.Port and rounds.Port.
func TestTrainingPortClashes(t *testing.T) {
	for _, port := range []uint16{probe.Port, rounds.Port} {
		file := "name: t\nduration: 10s\nnodes: 2\nprotocol: {kind: sync}\nworkload:\n  kind: training\n  port: " +
			strconv.Itoa(int(port)) + "\n"
		_, err := scenario.Parse("x.yaml", []byte(file))
		want := "x.yaml:7: workload.port: port " + strconv.Itoa(int(port)) + " is a port of the sync protocol"
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("port %d: Parse: %v\nwant prefix %q", port, err, want)
		}
	}
}
