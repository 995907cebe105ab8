package scenario

import (
	"fmt"
	"math"
	"regexp"
	"time"

	"github.com/chronosync/chronosync/model/netem"
)

// Validate checks the scenario's values: ranges, node numbers, and that
// every override and fault names something that exists. For a
// random_regular topology, whether an override or a link flap names an
// edge depends on the seed, so [Scenario.Resolve] checks that. A scenario
// from [Parse] reports errors with its file and line.
func (s *Scenario) Validate() error {
	v := &validator{s: s}
	v.top()
	v.clocks()
	v.topology()
	v.links()
	v.faults()
	v.protocol()
	v.workload()
	if linked := staticLinked(s.Topology, s.Nodes); linked != nil && len(v.list) == 0 {
		v.edges(linked, s.Nodes > 1)
	}
	s.src.locate(v.list)
	return v.list.err()
}

// validator collects the errors of one scenario.
type validator struct {
	s    *Scenario
	list ErrorList
}

func (v *validator) addf(path, format string, args ...any) {
	v.list = append(v.list, &Error{Path: path, Msg: fmt.Sprintf(format, args...)})
}

// node checks that n names a node.
func (v *validator) node(path string, n int) bool {
	if n < 0 || n >= v.s.Nodes {
		v.addf(path, "node %d does not exist; expected a node number from 0 to %d (nodes: %d)", n, v.s.Nodes-1, v.s.Nodes)
		return false
	}
	return true
}

func (v *validator) nonNegative(path, what string, d time.Duration) {
	if d < 0 {
		v.addf(path, "negative %s %q; expected a duration >= 0", what, formatDuration(d))
	}
}

func (v *validator) positive(path, what string, d time.Duration) {
	if d <= 0 {
		v.addf(path, "%s %q is not positive; expected a duration > 0", what, formatDuration(d))
	}
}

func (v *validator) percent(path, what string, p *Percent) {
	switch {
	case p == nil:
	case math.IsNaN(float64(*p)) || *p < 0:
		v.addf(path, "%s %s is below 0%%; expected a percentage from 0%% to 100%%", what, p)
	case *p > 100:
		v.addf(path, "%s %s is above 100%%; expected a percentage from 0%% to 100%%", what, p)
	}
}

// inRun checks that a time lies in the run.
func (v *validator) inRun(path string, at time.Duration) {
	if at < 0 || at >= v.s.Duration {
		v.addf(path, "time %q is outside the run; expected 0 <= at < duration (%s)", formatDuration(at), formatDuration(v.s.Duration))
	}
}

func (v *validator) top() {
	s := v.s
	if !regexp.MustCompile(`^[a-z0-9-]+$`).MatchString(s.Name) {
		v.addf("name", "invalid name %q; expected lowercase letters, digits and '-' only, like quickstart", s.Name)
	}
	if !s.untilStopped || s.Duration != 0 {
		v.positive("duration", "duration", s.Duration)
	}
	if s.Nodes < 1 {
		v.addf("nodes", "%d nodes; expected at least 1", s.Nodes)
	}
	if s.Nodes > MaxNodes {
		v.addf("nodes", "%d nodes: too large; expected at most %d", s.Nodes, MaxNodes)
	}
}

func (v *validator) clocks() {
	c := v.s.Clocks
	v.clockSpec("clocks.default", c.Default)
	first := make(map[int]int, len(c.Nodes))
	for i, nc := range c.Nodes {
		p := index("clocks.nodes", i)
		if v.node(key(p, "node"), nc.Node) {
			if j, dup := first[nc.Node]; dup {
				v.addf(key(p, "node"), "node %d already has a clock override at clocks.nodes[%d]; expected one override per node", nc.Node, j)
			}
			first[nc.Node] = i
		}
		v.clockSpec(p, nc.ClockSpec)
	}
}

func (v *validator) clockSpec(path string, c ClockSpec) {
	checkSpec(v, key(path, "offset"), c.Offset, false)
	checkSpec(v, key(path, "drift_ppm"), c.DriftPPM, false)
	checkSpec(v, key(path, "wander_ppm"), c.WanderPPM, true)
	checkSpec(v, key(path, "wander_step"), c.WanderStep, true)
	checkSpec(v, key(path, "wander_limit_ppm"), c.WanderLimitPPM, true)
	checkSpec(v, key(path, "periodic_ppm"), c.PeriodicPPM, false)
	checkSpec(v, key(path, "periodic_period"), c.PeriodicPeriod, true)
	checkSpec(v, key(path, "granularity"), c.Granularity, true)
	checkSpec(v, key(path, "read_noise"), c.ReadNoise, true)
	for i, st := range c.Steps {
		v.inRun(key(index(key(path, "steps"), i), "at"), st.At)
	}
	if t := c.Tracer; t != nil {
		tp := key(path, "tracer")
		checkSpec(v, key(tp, "offset"), t.Offset, false)
		checkSpec(v, key(tp, "drift_ppm"), t.DriftPPM, false)
		checkSpec(v, key(tp, "granularity"), t.Granularity, true)
		checkSpec(v, key(tp, "read_noise"), t.ReadNoise, true)
	}
}

// checkSpec checks a random spec; nonNeg says the value must not be
// negative, which rules out normal distributions.
func checkSpec[T float64 | time.Duration](v *validator, path string, s *Spec[T], nonNeg bool) {
	if s == nil {
		return
	}
	unit := "number"
	if _, ok := any(s.A).(time.Duration); ok {
		unit = "duration"
	}
	if math.IsNaN(float64(s.A)) || math.IsNaN(float64(s.B)) || math.IsInf(float64(s.A), 0) || math.IsInf(float64(s.B), 0) {
		v.addf(path, "%s is not finite; expected finite numbers", s)
		return
	}
	switch s.Dist {
	case DistFixed:
		if nonNeg && s.A < 0 {
			v.addf(path, "negative value %q; expected a %s >= 0", s, unit)
		}
	case DistUniform:
		if s.A > s.B {
			v.addf(path, "%s has its lower bound above its upper bound; expected uniform(a, b) with a <= b", s)
		} else if nonNeg && s.A < 0 {
			v.addf(path, "%s can draw negative values; expected a lower bound >= 0", s)
		}
	case DistNormal:
		if s.B < 0 {
			v.addf(path, "%s has a negative standard deviation; expected normal(mean, sd) with sd >= 0", s)
		} else if nonNeg {
			v.addf(path, "%s can draw negative values; expected a fixed %s >= 0 or uniform(a, b) with a >= 0", s, unit)
		}
	default:
		v.addf(path, "unknown distribution %q; expected a fixed value, uniform or normal", s.Dist)
	}
}

func (v *validator) topology() {
	t, n := v.s.Topology, v.s.Nodes
	switch t.Kind {
	case FullMesh, Ring, Star, RandomRegular:
	default:
		v.addf("topology.kind", "unknown topology kind %q; expected one of: full_mesh, ring, star, random_regular", t.Kind)
	}
	if t.Kind == Ring && n < 2 {
		v.addf("topology.kind", "a ring needs at least 2 nodes, not %d; expected nodes >= 2 or another kind", n)
	}
	if t.Kind == Star {
		if t.Hub < 0 || t.Hub >= n {
			v.addf("topology.hub", "hub %d does not exist; expected a node number from 0 to %d (nodes: %d)", t.Hub, n-1, n)
		}
	} else if t.Hub != 0 {
		v.addf("topology.hub", "hub applies only to kind star, not %q", t.Kind)
	}
	if e := v.s.EdgeCount(); e > MaxEdges {
		v.addf("topology.kind", "%s on %d nodes has %d directed edges: too many; expected at most %d (use ring, star or random_regular, or fewer nodes)", t.Kind, n, e, MaxEdges)
	}
	if t.Kind == RandomRegular {
		if t.Degree < 1 || t.Degree >= n || n*t.Degree%2 != 0 {
			v.addf("topology.degree", "degree %d is impossible with %d nodes; expected 1 <= degree < nodes and nodes*degree even", t.Degree, n)
		}
	} else if t.Degree != 0 {
		v.addf("topology.degree", "degree applies only to kind random_regular, not %q", t.Kind)
	}
}

func (v *validator) links() {
	l := v.s.Links
	v.linkSpec("links.default", l.Default)
	for i, o := range l.Overrides {
		p := index("links.overrides", i)
		v.pair(p, "override", o.From, o.To, o.Between)
		v.linkSpec(p, o.LinkSpec)
	}
}

// pair checks the from/to or between of a link override or link flap.
func (v *validator) pair(path, what string, from, to *int, between []int) {
	switch {
	case between != nil && (from != nil || to != nil):
		v.addf(path, "the %s has both between and from/to; expected one of the two", what)
	case between != nil:
		if len(between) != 2 {
			v.addf(key(path, "between"), "between has %d nodes; expected two, like [2, 3]", len(between))
			return
		}
		ok0, ok1 := v.node(index(key(path, "between"), 0), between[0]), v.node(index(key(path, "between"), 1), between[1])
		if ok0 && ok1 && between[0] == between[1] {
			v.addf(key(path, "between"), "between names node %d twice; expected two different nodes", between[0])
		}
	case from == nil && to == nil:
		v.addf(path, "the %s names no link; expected from and to (one direction) or between (both)", what)
	case from == nil || to == nil:
		v.addf(path, "the %s has only one of from and to; expected both", what)
	default:
		okF, okT := v.node(key(path, "from"), *from), v.node(key(path, "to"), *to)
		if okF && okT && *from == *to {
			v.addf(key(path, "to"), "from and to are both node %d; expected two different nodes", *from)
		}
	}
}

func (v *validator) linkSpec(path string, l LinkSpec) {
	if l.Preset != "" {
		if _, ok := LinkPreset(l.Preset); !ok {
			v.addf(key(path, "preset"), "unknown link preset %q; expected one of %s", l.Preset, presetList())
		}
		// Only a spec built in code can leave out a preset's field, and no
		// file can say so: the decoder always fills it in.
		for _, k := range l.presetUnset() {
			v.addf(key(path, k), "%s is not set, but preset %q sets it; expected the preset's value (LinkPreset) or another in its place", k, l.Preset)
		}
	}
	if l.Delay != nil {
		v.nonNegative(key(path, "delay"), "delay", *l.Delay)
	}
	if l.Jitter != nil {
		v.nonNegative(key(path, "jitter"), "jitter", *l.Jitter)
		if *l.Jitter > netem.MaxJitter {
			v.addf(key(path, "jitter"), "jitter %q is above netem's maximum; expected at most %s", formatDuration(*l.Jitter), formatDuration(netem.MaxJitter))
		}
	}
	v.percent(key(path, "delay_correlation"), "delay_correlation", l.DelayCorrelation)
	if d := l.Distribution; d != nil {
		switch *d {
		case netem.Uniform, netem.Normal, netem.Pareto, netem.ParetoNormal:
		default:
			v.addf(key(path, "distribution"), "unknown distribution %q; expected one of: uniform, normal, pareto, paretonormal", *d)
		}
	}
	if l.Loss != nil {
		v.loss(key(path, "loss"), *l.Loss)
	}
	v.percent(key(path, "duplicate"), "duplicate", l.Duplicate)
	v.percent(key(path, "duplicate_correlation"), "duplicate_correlation", l.DuplicateCorrelation)
	v.percent(key(path, "corrupt"), "corrupt", l.Corrupt)
	v.percent(key(path, "corrupt_correlation"), "corrupt_correlation", l.CorruptCorrelation)
	if r := l.Reorder; r != nil {
		p := key(path, "reorder")
		v.percent(key(p, "probability"), "reorder probability", &r.Probability)
		v.percent(key(p, "correlation"), "reorder correlation", &r.Correlation)
		if r.Gap < 0 {
			v.addf(key(p, "gap"), "negative gap %d; expected a packet count >= 0", r.Gap)
		} else if r.Gap > 0 && r.Probability == 0 {
			v.addf(key(p, "gap"), "gap %d with reorder probability 0%%; expected a probability above 0%% (tc refuses gap without reorder)", r.Gap)
		}
	}
	if r := l.Rate; r != nil {
		v.rate(key(path, "rate"), *r)
	}
	if l.Limit != nil && *l.Limit < 1 {
		v.addf(key(path, "limit"), "limit %d; expected a queue limit of at least 1 packet", *l.Limit)
	}
	if c := l.CrossTraffic; c != nil {
		v.cross(key(path, "cross_traffic"), *c)
	}
}

func (v *validator) rate(path string, r Rate) {
	switch {
	case r.BitsPerSecond == 0 && (r.PacketOverhead != 0 || r.CellSize != 0 || r.CellOverhead != 0):
		v.addf(key(path, "rate"), "rate 0bit with overheads or a cell size; expected a rate > 0 (overheads apply only to a rate limit)")
	case r.BitsPerSecond > 0 && r.BitsPerSecond < 8:
		v.addf(key(path, "rate"), "rate %s is below 8bit; expected at least 1bps (netem's rate is in whole bytes per second)", formatRate(r.BitsPerSecond))
	}
	if r.CellSize < 0 {
		v.addf(key(path, "cell_size"), "negative cell_size %d; expected bytes >= 0", r.CellSize)
	}
}

func (v *validator) loss(path string, l Loss) {
	models := 0
	for _, set := range []bool{l.Random != nil, l.GEModel != nil, l.State != nil} {
		if set {
			models++
		}
	}
	if models != 1 {
		v.addf(path, "%d loss models given; expected exactly one of random, gemodel, state", models)
	}
	if l.Correlation != nil && l.Random == nil {
		v.addf(key(path, "correlation"), "correlation applies only to random loss; expected it next to random")
	}
	v.percent(key(path, "random"), "loss", l.Random)
	v.percent(key(path, "correlation"), "loss correlation", l.Correlation)
	if g := l.GEModel; g != nil {
		p := key(path, "gemodel")
		v.percent(key(p, "p"), "p", &g.P)
		v.percent(key(p, "r"), "r", g.R)
		v.percent(key(p, "one_minus_h"), "one_minus_h", g.OneMinusH)
		v.percent(key(p, "one_minus_k"), "one_minus_k", g.OneMinusK)
	}
	if st := l.State; st != nil {
		p := key(path, "state")
		v.percent(key(p, "p13"), "p13", &st.P13)
		v.percent(key(p, "p31"), "p31", st.P31)
		v.percent(key(p, "p32"), "p32", st.P32)
		v.percent(key(p, "p23"), "p23", st.P23)
		v.percent(key(p, "p14"), "p14", st.P14)
	}
}

func (v *validator) cross(path string, c CrossTraffic) {
	switch c.Kind {
	case netem.CrossNone:
		return
	case netem.CrossPoisson, netem.CrossOnOff:
	default:
		v.addf(key(path, "kind"), "unknown cross traffic kind %q; expected one of: poisson, onoff, none", c.Kind)
		return
	}
	if c.Load <= 0 || c.Load > 100 || math.IsNaN(float64(c.Load)) {
		v.addf(key(path, "load"), "load %s; expected a percentage of the link rate above 0%% and at most 100%%", c.Load)
	}
	if c.PacketSize < 0 {
		v.addf(key(path, "packet_size"), "negative packet_size %d; expected bytes >= 0 (0 means 1500)", c.PacketSize)
	}
	if c.Kind == netem.CrossOnOff {
		v.positive(key(path, "on"), "on", c.On)
		v.positive(key(path, "off"), "off", c.Off)
		return
	}
	if c.On != 0 {
		v.addf(key(path, "on"), "on applies only to kind onoff, not %q", c.Kind)
	}
	if c.Off != 0 {
		v.addf(key(path, "off"), "off applies only to kind onoff, not %q", c.Kind)
	}
}
