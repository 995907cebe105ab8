package harness

import (
	"github.com/chronosync/chronosync/harness/engine"
	"github.com/chronosync/chronosync/harness/phasegaprun"
	"github.com/chronosync/chronosync/scenario"
)

// adapters are the workload adapters, by the scenario's workload kind: a
// new workload's package adds its line here.
func adapters() *engine.Registry {
	r := engine.NewRegistry()
	r.Register(string(scenario.WorkloadPhasegap), phasegaprun.New)
	return r
}
