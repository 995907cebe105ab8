package harness

import (
	"github.com/chronosync/chronosync/harness/engine"
	"github.com/chronosync/chronosync/harness/phasegaprun"
	"github.com/chronosync/chronosync/harness/pingrun"
	"github.com/chronosync/chronosync/harness/syncrun"
	"github.com/chronosync/chronosync/scenario"
)

// adapters are the workload adapters, by the scenario's workload and
// protocol kinds (engine.Key; a kind left out matches any): a new
// workload's or protocol's package adds its line here.
func adapters() *engine.Registry {
	r := engine.NewRegistry()
	r.Register(engine.Key{Workload: string(scenario.WorkloadPhasegap)}, phasegaprun.New)
	r.Register(engine.Key{Protocol: string(scenario.ProtocolPing)}, pingrun.New)
	r.Register(engine.Key{Protocol: string(scenario.ProtocolSync)}, syncrun.New)
	r.Register(engine.Key{Workload: string(scenario.WorkloadTraining), Protocol: string(scenario.ProtocolSync)}, syncrun.NewTraced)
	return r
}
