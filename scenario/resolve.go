package scenario

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/chronosync/chronosync/model/clockmodel"
	"github.com/chronosync/chronosync/model/netem"
	"github.com/chronosync/chronosync/model/topology"
)

// Resolved is a scenario with every random value drawn and every default
// and override applied: what one run simulates.
type Resolved struct {
	Name     string
	Seed     uint64 // the seed the values were drawn with
	Duration time.Duration
	Topology Topology
	Nodes    []ResolvedNode // indexed by node ID
	Edges    []ResolvedEdge // every directed topology edge, sorted by From, then To
	// DefaultLink is links.default: the link between two nodes that the
	// topology does not connect (the rest of the network, which carries
	// control traffic such as a master's streams).
	DefaultLink netem.Params
	// NICRate is links.nic: every node's interface rate for stream
	// messages, bits per second; 0 for none.
	NICRate uint64
	// Faults are sorted by At (stably, so equal times keep file order).
	// Partition faults list every node: the nodes the file leaves out are
	// appended as one more group. link_flap faults have Count >= 1.
	// clock_step faults are listed here only, not in Clock.Steps: the
	// fault injector applies them when they fire.
	Faults []Fault
	// Workload is the scenario's workload as decoded, defaults included
	// (Workload.Training for a training workload, Workload.Phasegap for a
	// phasegap workload).
	Workload Workload
	Protocol Protocol
}

// ResolvedNode is one node's clocks.
type ResolvedNode struct {
	ID     int
	Clock  clockmodel.Params // host clock S; Steps sorted by At
	Tracer clockmodel.TracerParams
}

// ResolvedEdge is one direction of one link.
type ResolvedEdge struct {
	From, To int
	Link     netem.Params
}

// Out returns the edges leaving node from, sorted by To.
func (r *Resolved) Out(from int) []ResolvedEdge {
	lo := sort.Search(len(r.Edges), func(i int) bool { return r.Edges[i].From >= from })
	hi := sort.Search(len(r.Edges), func(i int) bool { return r.Edges[i].From > from })
	return r.Edges[lo:hi]
}

// Resolve draws every random value with streams of seed (see [Stream];
// pass s.Seed unless the seed is overridden) and expands the topology,
// link defaults and overrides into per-node and per-directed-edge
// parameters. The same scenario and seed always give the same result.
// It validates the scenario first, and also checks what depends on the
// seed: random_regular edges named by overrides and link flaps, and the
// drawn clock and link parameters against the models' own limits.
func (s *Scenario) Resolve(seed uint64) (*Resolved, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	edges, err := s.topologyEdges(seed)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", s.Name, err)
	}
	v := &validator{s: s}
	isEdge := staticLinked(s.Topology, s.Nodes)
	if isEdge == nil {
		set := make(map[[2]int]bool, len(edges))
		for _, e := range edges {
			set[[2]int{e.From, e.To}] = true
		}
		isEdge = func(a, b int) bool { return set[[2]int{a, b}] }
	}
	touched := v.edges(isEdge, len(edges) > 0)
	r := &Resolved{
		Name:     s.Name,
		Seed:     seed,
		Duration: s.Duration,
		Topology: s.Topology,
		Faults:   s.resolveFaults(),
		Workload: s.Workload,
		Protocol: s.Protocol,
	}
	reported := make(map[string]bool) // paths with a model error already
	r.Nodes = s.resolveNodes(v, reported, seed)
	r.Edges = make([]ResolvedEdge, 0, len(edges))
	def := s.Links.Default.params() // shared by every edge no override touches
	r.DefaultLink = def
	r.NICRate = s.Links.NICRate
	for _, e := range edges {
		p, path := def, "links.default"
		if ovs := touched[[2]int{e.From, e.To}]; ovs != nil {
			spec := s.Links.Default
			for _, i := range ovs {
				spec, path = spec.overlay(s.Links.Overrides[i].LinkSpec), index("links.overrides", i)
			}
			p = spec.params()
		}
		// Check the default's parameters once and each overridden edge's;
		// report one error per spec, not one per edge.
		if !reported[path] {
			err := p.Validate()
			if err != nil {
				v.addf(path, "edge %d->%d: %v", e.From, e.To, err)
			}
			reported[path] = err != nil || path == "links.default"
		}
		r.Edges = append(r.Edges, ResolvedEdge{From: e.From, To: e.To, Link: p})
	}
	s.src.locate(v.list)
	if err := v.list.err(); err != nil {
		return nil, err
	}
	return r, nil
}

// topologyEdges returns the directed edges, sorted by From, then To.
func (s *Scenario) topologyEdges(seed uint64) ([]topology.Edge, error) {
	var edges []topology.Edge
	var err error
	switch t := s.Topology; t.Kind {
	case FullMesh:
		edges, err = topology.FullMesh(s.Nodes)
	case Ring:
		edges, err = topology.Ring(s.Nodes)
	case Star:
		edges, err = topology.Star(s.Nodes, t.Hub)
	case RandomRegular:
		edges, err = topology.RandomRegular(s.Nodes, t.Degree, Stream(seed, "scenario/topology"))
	default:
		err = fmt.Errorf("unknown topology kind %q", t.Kind)
	}
	if err != nil {
		return nil, fmt.Errorf("topology: %w", err)
	}
	edges = slices.Clone(edges)
	slices.SortFunc(edges, func(a, b topology.Edge) int {
		return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To))
	})
	return slices.Compact(edges), nil
}

// resolveFaults returns a sorted, normalized deep copy of the faults.
func (s *Scenario) resolveFaults() []Fault {
	faults := make([]Fault, len(s.Faults))
	for i, f := range s.Faults {
		f.Between = slices.Clone(f.Between)
		groups := make([][]int, 0, len(f.Groups)+1)
		in := make([]bool, s.Nodes)
		for _, g := range f.Groups {
			groups = append(groups, slices.Clone(g))
			for _, n := range g {
				in[n] = true
			}
		}
		if f.Kind == FaultPartition {
			var rest []int
			for n, ok := range in {
				if !ok {
					rest = append(rest, n)
				}
			}
			if rest != nil {
				groups = append(groups, rest)
			}
		}
		f.Groups = nil
		if len(groups) > 0 {
			f.Groups = groups
		}
		f.Node, f.From, f.To = clonePtr(f.Node), clonePtr(f.From), clonePtr(f.To)
		f.RestartAfter, f.HealAfter, f.For = clonePtr(f.RestartAfter), clonePtr(f.HealAfter), clonePtr(f.For)
		faults[i] = f
	}
	slices.SortStableFunc(faults, func(a, b Fault) int { return cmp.Compare(a.At, b.At) })
	return faults
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// resolveNodes draws every node's clocks. clock_step faults are not folded
// into Clock.Steps: the simulator's fault injector applies them when they
// fire, and the event log records them.
// It reports at most one model error per clock spec.
func (s *Scenario) resolveNodes(v *validator, reported map[string]bool, seed uint64) []ResolvedNode {
	over := make([]int, s.Nodes) // node → index+1 in Clocks.Nodes
	for i, nc := range s.Clocks.Nodes {
		over[nc.Node] = i + 1
	}
	nodes := make([]ResolvedNode, s.Nodes)
	for id := range nodes {
		spec, path := s.Clocks.Default, "clocks.default"
		if i := over[id]; i > 0 {
			spec, path = spec.overlay(s.Clocks.Nodes[i-1].ClockSpec), index("clocks.nodes", i-1)
		}
		clock, tracer := spec.draw(seed, id)
		slices.SortStableFunc(clock.Steps, func(a, b clockmodel.Step) int { return cmp.Compare(a.At, b.At) })
		if err := clock.Validate(); err != nil && !reported[path] {
			reported[path] = true
			v.addf(path, "node %d: %v", id, err)
		}
		if err := tracer.Validate(); err != nil && !reported[key(path, "tracer")] {
			reported[key(path, "tracer")] = true
			v.addf(key(path, "tracer"), "node %d: %v", id, err)
		}
		nodes[id] = ResolvedNode{ID: id, Clock: clock, Tracer: tracer}
	}
	return nodes
}

// overlay returns c with the fields set in o replaced; the tracer's fields
// are replaced one by one.
func (c ClockSpec) overlay(o ClockSpec) ClockSpec {
	set(&c.Offset, o.Offset)
	set(&c.DriftPPM, o.DriftPPM)
	set(&c.WanderPPM, o.WanderPPM)
	set(&c.WanderStep, o.WanderStep)
	set(&c.WanderLimitPPM, o.WanderLimitPPM)
	set(&c.PeriodicPPM, o.PeriodicPPM)
	set(&c.PeriodicPeriod, o.PeriodicPeriod)
	set(&c.Granularity, o.Granularity)
	set(&c.ReadNoise, o.ReadNoise)
	if o.Steps != nil {
		c.Steps = o.Steps
	}
	if o.Tracer != nil {
		var t TracerSpec
		if c.Tracer != nil {
			t = *c.Tracer
		}
		set(&t.Offset, o.Tracer.Offset)
		set(&t.DriftPPM, o.Tracer.DriftPPM)
		set(&t.Granularity, o.Tracer.Granularity)
		set(&t.ReadNoise, o.Tracer.ReadNoise)
		c.Tracer = &t
	}
	return c
}

// draw draws one node's clock values, each from its own stream named
// "scenario/clock/<node>/<key>" or "scenario/tracer/<node>/<key>".
func (c ClockSpec) draw(seed uint64, node int) (clockmodel.Params, clockmodel.TracerParams) {
	cl := func(k string) string { return fmt.Sprintf("scenario/clock/%d/%s", node, k) }
	p := clockmodel.Params{
		Offset:         drawSpec(seed, cl("offset"), c.Offset),
		PPM:            drawSpec(seed, cl("drift_ppm"), c.DriftPPM),
		WanderPPM:      drawSpec(seed, cl("wander_ppm"), c.WanderPPM),
		WanderStep:     drawSpec(seed, cl("wander_step"), c.WanderStep),
		WanderLimitPPM: drawSpec(seed, cl("wander_limit_ppm"), c.WanderLimitPPM),
		PeriodicPPM:    drawSpec(seed, cl("periodic_ppm"), c.PeriodicPPM),
		PeriodicPeriod: drawSpec(seed, cl("periodic_period"), c.PeriodicPeriod),
		Granularity:    drawSpec(seed, cl("granularity"), c.Granularity),
		ReadNoise:      drawSpec(seed, cl("read_noise"), c.ReadNoise),
	}
	for _, st := range c.Steps {
		p.Steps = append(p.Steps, clockmodel.Step{At: st.At, By: st.By})
	}
	var t clockmodel.TracerParams
	if tr := c.Tracer; tr != nil {
		tc := func(k string) string { return fmt.Sprintf("scenario/tracer/%d/%s", node, k) }
		t = clockmodel.TracerParams{
			Offset:      drawSpec(seed, tc("offset"), tr.Offset),
			PPM:         drawSpec(seed, tc("drift_ppm"), tr.DriftPPM),
			Granularity: drawSpec(seed, tc("granularity"), tr.Granularity),
			ReadNoise:   drawSpec(seed, tc("read_noise"), tr.ReadNoise),
		}
	}
	return p, t
}

// drawSpec returns the value of a spec: zero if it is not given, its value
// if fixed, else a draw from the named stream.
func drawSpec[T float64 | time.Duration](seed uint64, stream string, s *Spec[T]) T {
	switch {
	case s == nil:
		return 0
	case s.Dist == DistFixed:
		return s.A
	}
	return s.Draw(Stream(seed, stream))
}

// params converts a link spec to netem's parameters, applying tc-netem's
// defaults for the loss model parameters that are not given.
func (l LinkSpec) params() netem.Params {
	var p netem.Params
	get(&p.Delay, l.Delay)
	get(&p.Jitter, l.Jitter)
	p.DelayCorr = fraction(l.DelayCorrelation)
	get(&p.Distribution, l.Distribution)
	if ls := l.Loss; ls != nil {
		switch {
		case ls.Random != nil:
			p.Loss = netem.Loss{Model: netem.LossRandom, Probability: fraction(ls.Random), Correlation: fraction(ls.Correlation)}
		case ls.GEModel != nil:
			g := ls.GEModel
			p.Loss = netem.Loss{Model: netem.LossGEModel, P: g.P.fraction(), R: 1 - g.P.fraction(), OneMinusH: 1}
			get(&p.Loss.R, fractionPtr(g.R))
			get(&p.Loss.OneMinusH, fractionPtr(g.OneMinusH))
			get(&p.Loss.OneMinusK, fractionPtr(g.OneMinusK))
		case ls.State != nil:
			st := ls.State
			p.Loss = netem.Loss{Model: netem.LossState, P13: st.P13.fraction(), P31: 1 - st.P13.fraction()}
			get(&p.Loss.P31, fractionPtr(st.P31))
			get(&p.Loss.P32, fractionPtr(st.P32))
			get(&p.Loss.P23, fractionPtr(st.P23))
			get(&p.Loss.P14, fractionPtr(st.P14))
		}
	}
	p.Duplicate = fraction(l.Duplicate)
	p.DuplicateCorr = fraction(l.DuplicateCorrelation)
	p.Corrupt = fraction(l.Corrupt)
	p.CorruptCorr = fraction(l.CorruptCorrelation)
	if r := l.Reorder; r != nil {
		p.Reorder, p.ReorderCorr, p.ReorderGap = r.Probability.fraction(), r.Correlation.fraction(), r.Gap
	}
	if r := l.Rate; r != nil {
		p.Rate = netem.Rate{BitsPerSecond: r.BitsPerSecond, PacketOverhead: r.PacketOverhead, CellSize: r.CellSize, CellOverhead: r.CellOverhead}
	}
	get(&p.Limit, l.Limit)
	if c := l.CrossTraffic; c != nil && c.Kind != netem.CrossNone {
		p.Cross = netem.CrossTraffic{Kind: c.Kind, Load: c.Load.fraction(), PacketSize: c.PacketSize, On: c.On, Off: c.Off}
	}
	return p
}

// get sets *dst to *v if v is set.
func get[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

func fraction(p *Percent) float64 {
	if p == nil {
		return 0
	}
	return p.fraction()
}

func fractionPtr(p *Percent) *float64 {
	if p == nil {
		return nil
	}
	f := p.fraction()
	return &f
}
