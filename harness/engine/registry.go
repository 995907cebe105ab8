package engine

import (
	"fmt"

	"github.com/chronosync/chronosync/scenario"
)

// New makes a scenario's protocol: it checks what the scenario asks of it
// and reads what it needs (a costs file) before the run starts.
type New func(sc *scenario.Scenario, r *scenario.Resolved) (Protocol, error)

// Key is what a registry finds an adapter by: the scenario's workload
// kind and protocol kind. A key with an empty field matches any kind
// there (Lookup): a workload adapter that runs whatever protocol the
// scenario names ({Workload: "phasegap"}), a protocol adapter for any
// workload ({Protocol: "ping"}).
type Key struct {
	Workload string
	Protocol string
}

// Registry finds an adapter by Key. It is read by key only: the order in
// which adapters were registered decides nothing.
type Registry struct {
	byKey map[Key]New
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{byKey: map[Key]New{}} }

// Register adds the adapter of k; a key registered twice, or one with
// neither kind, is a programming error and panics.
func (r *Registry) Register(k Key, n New) {
	if k == (Key{}) || n == nil {
		panic(fmt.Sprintf("engine: register %+v: empty key or nil constructor", k))
	}
	if _, ok := r.byKey[k]; ok {
		panic(fmt.Sprintf("engine: adapter %+v registered twice", k))
	}
	r.byKey[k] = n
}

// Lookup returns the adapter of a scenario of workload kind workload and
// protocol kind protocol, ok false if none is registered: the adapter of
// both kinds if there is one, else the workload's (any protocol), else
// the protocol's (any workload).
func (r *Registry) Lookup(workload, protocol string) (New, bool) {
	for _, k := range [...]Key{{workload, protocol}, {Workload: workload}, {Protocol: protocol}} {
		if k.Workload == "" && k.Protocol == "" {
			continue
		}
		if n, ok := r.byKey[k]; ok {
			return n, true
		}
	}
	return nil, false
}
