package sweep

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/chronosync/chronosync/scenario"
)

// sweepTraceIters is how many iterations a sim or real point's trace.json
// shows.
const sweepTraceIters = 10

// Scenario is pt as a scenario for the simulator or the real backend,
// built directly and validated: P nodes in a ring (a full mesh for one
// rank: a ring of one is its own neighbour), the matrix's link with the
// point's preset over it (the preset's fields win), and the phasegap
// workload with the point's parameters, sweepTraceIters traced iterations
// and the matrix's costs file (made absolute).
func (m *Matrix) Scenario(pt Point) (*scenario.Scenario, error) {
	q := pt.Params
	preset, ok := scenario.LinkPreset(pt.Preset)
	if !ok {
		return nil, fmt.Errorf("point %s: unknown link preset %q", pt.ID(), pt.Preset)
	}
	if m.Link.Delay > 0 && preset.Delay == nil {
		d := m.Link.Delay
		preset.Delay = &d
	}
	if m.Link.Jitter > 0 && preset.Jitter == nil {
		j := m.Link.Jitter
		preset.Jitter = &j
	}
	topology := scenario.Ring
	if q.Ranks < 2 {
		topology = scenario.FullMesh
	}
	pg := scenario.DefaultPhasegap()
	pg.Settings = q.Settings
	pg.TraceIters = sweepTraceIters
	if c := m.CostsPath(); c != "" {
		if abs, err := filepath.Abs(c); err == nil {
			c = abs
		}
		pg.Costs, pg.CostsPath = c, c
	}
	sc := &scenario.Scenario{
		Name:        pointName(m.Name + "-" + pt.Sweep + "-" + pt.ID()),
		Description: fmt.Sprintf("point %s of sweep %s of %s, on the %s transport", pt.ID(), pt.Sweep, m.Name, pt.Transport),
		Seed:        m.Seed,
		Duration:    m.Duration,
		Nodes:       q.Ranks,
		Topology:    scenario.Topology{Kind: topology},
		Links:       scenario.Links{Default: preset},
		Workload:    scenario.Workload{Kind: scenario.WorkloadPhasegap, Phasegap: pg},
		Protocol:    scenario.Protocol{Kind: scenario.ProtocolNone},
	}
	if err := sc.Validate(); err != nil {
		return nil, fmt.Errorf("point %s's scenario: %w", pt.ID(), err)
	}
	return sc, nil
}

// pointName is s as a scenario name: lower case, every character outside
// [a-z0-9-] a hyphen.
func pointName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return '-'
	}, s)
}
