package scenario

import (
	"fmt"

	"github.com/chronosync/chronosync/model/netem"
)

func (v *validator) faults() {
	for i, f := range v.s.Faults {
		p := index("faults", i)
		v.inRun(key(p, "at"), f.At)
		switch f.Kind {
		case FaultCrash:
			v.faultNode(p, f)
			if f.RestartAfter != nil {
				v.positive(key(p, "restart_after"), "restart_after", *f.RestartAfter)
			}
		case FaultPartition:
			v.partition(p, f)
			if f.HealAfter != nil {
				v.positive(key(p, "heal_after"), "heal_after", *f.HealAfter)
			}
		case FaultLinkFlap:
			v.pair(p, "link_flap", f.From, f.To, f.Between)
			v.positive(key(p, "down"), "down", f.Down)
			v.positive(key(p, "up"), "up", f.Up)
			if f.Count < 1 {
				v.addf(key(p, "count"), "count %d; expected at least 1 down/up cycle", f.Count)
			}
		case FaultClockStep:
			v.faultNode(p, f)
			if f.By == 0 {
				v.addf(key(p, "by"), "clock_step by 0s; expected a non-zero signed duration like -1ms")
			}
		case FaultSlowNode:
			v.faultNode(p, f)
			v.positive(key(p, "extra_delay"), "extra_delay", f.ExtraDelay)
			if f.For != nil {
				v.positive(key(p, "for"), "for", *f.For)
			}
		default:
			v.addf(key(p, "kind"), "unknown fault kind %q; expected one of: crash, partition, link_flap, clock_step, slow_node", f.Kind)
		}
	}
}

func (v *validator) faultNode(path string, f Fault) {
	if f.Node == nil {
		v.addf(path, "a %s fault needs a node; expected node: N", f.Kind)
		return
	}
	v.node(key(path, "node"), *f.Node)
}

func (v *validator) partition(path string, f Fault) {
	gp := key(path, "groups")
	if len(f.Groups) == 0 {
		v.addf(path, "a partition needs groups; expected groups: [[0, 1], [2, 3]]")
		return
	}
	where := make(map[int]int) // node → group
	for g, group := range f.Groups {
		if len(group) == 0 {
			v.addf(index(gp, g), "empty group; expected at least one node")
		}
		for j, n := range group {
			np := index(index(gp, g), j)
			if !v.node(np, n) {
				continue
			}
			if first, dup := where[n]; dup {
				v.addf(np, "node %d is in groups[%d] and groups[%d]; expected disjoint groups", n, first, g)
				continue
			}
			where[n] = g
		}
	}
}

// linked reports whether the topology has an edge between two nodes.
type linked func(a, b int) bool

// staticLinked returns the edge test of a topology that does not depend on
// the seed, or nil.
func staticLinked(t Topology, n int) linked {
	switch t.Kind {
	case FullMesh:
		return func(a, b int) bool { return a != b }
	case Ring:
		return func(a, b int) bool { return a != b && n > 1 && (b == (a+1)%n || a == (b+1)%n) }
	case Star:
		return func(a, b int) bool { return a != b && (a == t.Hub || b == t.Hub) }
	}
	return nil
}

// Links returns the directed links a link_flap takes down: both
// directions of Between, or From → To.
func (f Fault) Links() [][2]int { return directed(f.From, f.To, f.Between) }

// directed returns the directions a from/to or between pair names.
func directed(from, to *int, between []int) [][2]int {
	switch {
	case len(between) == 2:
		return [][2]int{{between[0], between[1]}, {between[1], between[0]}}
	case from != nil && to != nil:
		return [][2]int{{*from, *to}}
	}
	return nil
}

// pairPath is the path of the key that names a pair.
func pairPath(path string, between []int) string {
	if between != nil {
		return key(path, "between")
	}
	return key(path, "from")
}

// edges runs the checks that need the topology's edges: every override
// and link flap names an edge, and cross traffic has a rate on every edge
// it applies to. It returns, for every directed edge some override
// touches, the indices of those overrides in order.
func (v *validator) edges(isEdge linked, anyEdge bool) map[[2]int][]int {
	s := v.s
	name := fmt.Sprintf("the %s topology", s.Topology.Kind)
	touched := make(map[[2]int][]int)
	var order [][2]int // directed edges in order of first touch
	for i, o := range s.Links.Overrides {
		p := index("links.overrides", i)
		for _, e := range directed(o.From, o.To, o.Between) {
			if !isEdge(e[0], e[1]) {
				v.addf(pairPath(p, o.Between), "nodes %d and %d are not linked in %s; expected an edge of the topology", e[0], e[1], name)
				break
			}
			if touched[e] == nil {
				order = append(order, e)
			}
			touched[e] = append(touched[e], i)
		}
	}
	for i, f := range s.Faults {
		if f.Kind != FaultLinkFlap {
			continue
		}
		p := index("faults", i)
		for _, e := range directed(f.From, f.To, f.Between) {
			if !isEdge(e[0], e[1]) {
				v.addf(pairPath(p, f.Between), "nodes %d and %d are not linked in %s; expected an edge of the topology", e[0], e[1], name)
				break
			}
		}
	}

	// Cross traffic needs a rate on every edge it applies to.
	def := s.Links.Default
	if anyEdge && crossOn(def) && !rateOn(def) {
		v.addf("links.default.cross_traffic", "cross traffic needs a rate; expected links.default.rate with a rate > 0")
	}
	reported := make(map[string]bool)
	for _, e := range order {
		spec, crossAt, rateAt := def, "links.default", "links.default"
		for _, i := range touched[e] {
			o := s.Links.Overrides[i].LinkSpec
			p := index("links.overrides", i)
			if o.CrossTraffic != nil {
				crossAt = p
			}
			if o.Rate != nil {
				rateAt = p
			}
			spec = spec.overlay(o)
		}
		if !crossOn(spec) || rateOn(spec) || (crossAt == "links.default" && rateAt == "links.default") {
			continue
		}
		path := key(crossAt, "cross_traffic")
		if crossAt == "links.default" {
			path = key(rateAt, "rate")
		}
		if !reported[path] {
			reported[path] = true
			v.addf(path, "cross traffic on edge %d->%d has no rate; expected a rate > 0 on every edge with cross traffic", e[0], e[1])
		}
	}
	return touched
}

func crossOn(l LinkSpec) bool {
	return l.CrossTraffic != nil && l.CrossTraffic.Kind != netem.CrossNone
}

func rateOn(l LinkSpec) bool { return l.Rate != nil && l.Rate.BitsPerSecond > 0 }

// overlay returns l with the fields set in o replaced.
func (l LinkSpec) overlay(o LinkSpec) LinkSpec {
	set(&l.Delay, o.Delay)
	set(&l.Jitter, o.Jitter)
	set(&l.DelayCorrelation, o.DelayCorrelation)
	set(&l.Distribution, o.Distribution)
	set(&l.Loss, o.Loss)
	set(&l.Duplicate, o.Duplicate)
	set(&l.DuplicateCorrelation, o.DuplicateCorrelation)
	set(&l.Corrupt, o.Corrupt)
	set(&l.CorruptCorrelation, o.CorruptCorrelation)
	set(&l.Reorder, o.Reorder)
	set(&l.Rate, o.Rate)
	set(&l.Limit, o.Limit)
	set(&l.CrossTraffic, o.CrossTraffic)
	return l
}

// set replaces *dst with v if v is set.
func set[T any](dst **T, v *T) {
	if v != nil {
		*dst = v
	}
}
