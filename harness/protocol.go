package harness

import (
	"fmt"

	"github.com/chronosync/chronosync/harness/engine"
	"github.com/chronosync/chronosync/scenario"
)

// protocol is a workload adapter as the root drives it (engine.Protocol).
type protocol = engine.Protocol

// truth is what protocols measure against (engine.Truth): a backend.
type truth = engine.Truth

// newProtocol makes sc's protocol: the adapter registered for its
// workload and protocol kinds (adapters; no protocol kind is ping).
func newProtocol(sc *scenario.Scenario, r *scenario.Resolved) (protocol, error) {
	kind := sc.Protocol.Kind
	if kind == "" {
		kind = scenario.ProtocolPing
	}
	if n, ok := adapters().Lookup(string(sc.Workload.Kind), string(kind)); ok {
		return n(sc, r)
	}
	if kind == scenario.ProtocolNone {
		return nil, fmt.Errorf("protocol none with workload %q: nothing to run", sc.Workload.Kind)
	}
	return nil, fmt.Errorf("protocol %q is not implemented", sc.Protocol.Kind)
}
