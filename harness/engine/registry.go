package engine

import (
	"fmt"

	"github.com/chronosync/chronosync/scenario"
)

// New makes a scenario's protocol: it checks what the scenario asks of it
// and reads what it needs (a costs file) before the run starts.
type New func(sc *scenario.Scenario, r *scenario.Resolved) (Protocol, error)

// Registry finds an adapter by kind. It is read by key only: the order in
// which adapters were registered decides nothing.
type Registry struct {
	byKind map[string]New
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{byKind: map[string]New{}} }

// Register adds the adapter of kind; a kind registered twice is a
// programming error and panics.
func (r *Registry) Register(kind string, n New) {
	if kind == "" || n == nil {
		panic(fmt.Sprintf("engine: register %q: empty kind or nil constructor", kind))
	}
	if _, ok := r.byKind[kind]; ok {
		panic(fmt.Sprintf("engine: adapter %q registered twice", kind))
	}
	r.byKind[kind] = n
}

// Lookup returns the adapter of kind, ok false if none is registered.
func (r *Registry) Lookup(kind string) (New, bool) {
	n, ok := r.byKind[kind]
	return n, ok
}
