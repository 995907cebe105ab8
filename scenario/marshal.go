package scenario

import (
	"bytes"
	"fmt"
	"strconv"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/chronosync/chronosync/model/netem"
	"github.com/chronosync/chronosync/phasegap/params"
)

// Marshal returns the scenario as a YAML scenario file that [Parse] reads
// back to an equal Scenario. It writes every value the decoder would fill
// in by default (seed, topology, workload, protocol), so the file records
// the run completely; set Seed first to record an overridden seed.
func (s *Scenario) Marshal() ([]byte, error) {
	root := mapping()
	add(root, "name", str(s.Name))
	if s.Description != "" {
		add(root, "description", str(s.Description))
	}
	add(root, "seed", plain(strconv.FormatUint(s.Seed, 10)))
	add(root, "duration", dur(s.Duration))
	add(root, "nodes", integer(s.Nodes))
	if s.Impairment != "" {
		add(root, "impairment", str(string(s.Impairment)))
	}
	if c := clocksNode(s.Clocks); len(c.Content) > 0 {
		add(root, "clocks", c)
	}
	topo := mapping()
	add(topo, "kind", str(string(s.Topology.Kind)))
	if s.Topology.Kind == Star || s.Topology.Hub != 0 {
		add(topo, "hub", integer(s.Topology.Hub))
	}
	if s.Topology.Kind == RandomRegular || s.Topology.Degree != 0 {
		add(topo, "degree", integer(s.Topology.Degree))
	}
	add(root, "topology", topo)
	if l := linksNode(s.Links); len(l.Content) > 0 {
		add(root, "links", l)
	}
	if len(s.Faults) > 0 {
		faults := sequence()
		for _, f := range s.Faults {
			faults.Content = append(faults.Content, faultNode(f))
		}
		add(root, "faults", faults)
	}
	add(root, "workload", workloadNode(s.Workload))
	add(root, "protocol", protocolNode(s.Protocol))

	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return nil, fmt.Errorf("scenario %s: marshal: %w", s.Name, err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("scenario %s: marshal: %w", s.Name, err)
	}
	return buf.Bytes(), nil
}

func mapping() *yaml.Node  { return &yaml.Node{Kind: yaml.MappingNode} }
func sequence() *yaml.Node { return &yaml.Node{Kind: yaml.SequenceNode} }

func add(m *yaml.Node, k string, v *yaml.Node) {
	m.Content = append(m.Content, str(k), v)
}

// str is a string scalar; the encoder quotes it if it would read back as
// anything else.
func str(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v} }

// plain is an untagged scalar: numbers, which read back as int or float.
func plain(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: v} }

func integer(v int) *yaml.Node       { return plain(strconv.Itoa(v)) }
func dur(d time.Duration) *yaml.Node { return str(formatDuration(d)) }
func pct(p Percent) *yaml.Node       { return str(p.String()) }

func ints(vs []int) *yaml.Node {
	n := sequence()
	n.Style = yaml.FlowStyle
	for _, v := range vs {
		n.Content = append(n.Content, integer(v))
	}
	return n
}

// spec writes a fixed number as a number and everything else as a string.
func spec[T float64 | time.Duration](s *Spec[T]) *yaml.Node {
	if _, ok := any(s.A).(float64); ok && s.Dist == DistFixed {
		return plain(s.String())
	}
	return str(s.String())
}

func addSpec[T float64 | time.Duration](m *yaml.Node, k string, s *Spec[T]) {
	if s != nil {
		add(m, k, spec(s))
	}
}

// addInt adds a non-zero integer.
func addInt(m *yaml.Node, k string, v int) {
	if v != 0 {
		add(m, k, integer(v))
	}
}

func addPct(m *yaml.Node, k string, p *Percent) {
	if p != nil {
		add(m, k, pct(*p))
	}
}

func clocksNode(c Clocks) *yaml.Node {
	m := mapping()
	if def := mapping(); addClock(def, c.Default) {
		add(m, "default", def)
	}
	if len(c.Nodes) > 0 {
		nodes := sequence()
		for _, nc := range c.Nodes {
			n := mapping()
			add(n, "node", integer(nc.Node))
			addClock(n, nc.ClockSpec)
			nodes.Content = append(nodes.Content, n)
		}
		add(m, "nodes", nodes)
	}
	return m
}

// addClock adds the set fields of c to m and reports whether there were any.
func addClock(m *yaml.Node, c ClockSpec) bool {
	before := len(m.Content)
	addSpec(m, "offset", c.Offset)
	addSpec(m, "drift_ppm", c.DriftPPM)
	addSpec(m, "wander_ppm", c.WanderPPM)
	addSpec(m, "wander_step", c.WanderStep)
	addSpec(m, "wander_limit_ppm", c.WanderLimitPPM)
	addSpec(m, "periodic_ppm", c.PeriodicPPM)
	addSpec(m, "periodic_period", c.PeriodicPeriod)
	addSpec(m, "granularity", c.Granularity)
	addSpec(m, "read_noise", c.ReadNoise)
	if c.Steps != nil {
		steps := sequence()
		for _, st := range c.Steps {
			sn := mapping()
			sn.Style = yaml.FlowStyle
			add(sn, "at", dur(st.At))
			add(sn, "by", dur(st.By))
			steps.Content = append(steps.Content, sn)
		}
		add(m, "steps", steps)
	}
	if t := c.Tracer; t != nil {
		tn := mapping()
		addSpec(tn, "offset", t.Offset)
		addSpec(tn, "drift_ppm", t.DriftPPM)
		addSpec(tn, "granularity", t.Granularity)
		addSpec(tn, "read_noise", t.ReadNoise)
		add(m, "tracer", tn)
	}
	return len(m.Content) > before
}

func linksNode(l Links) *yaml.Node {
	m := mapping()
	if l.NICRate > 0 {
		add(m, "nic", str(formatRate(l.NICRate)))
	}
	if def := mapping(); addLink(def, l.Default) {
		add(m, "default", def)
	}
	if len(l.Overrides) > 0 {
		ovs := sequence()
		for _, o := range l.Overrides {
			n := mapping()
			if o.From != nil {
				add(n, "from", integer(*o.From))
			}
			if o.To != nil {
				add(n, "to", integer(*o.To))
			}
			if o.Between != nil {
				add(n, "between", ints(o.Between))
			}
			addLink(n, o.LinkSpec)
			ovs.Content = append(ovs.Content, n)
		}
		add(m, "overrides", ovs)
	}
	return m
}

// addLink adds the set fields of l to m and reports whether there were any.
// With a preset, it writes the preset's name and only the fields that
// differ from the preset's, which the decoder fills in.
func addLink(m *yaml.Node, l LinkSpec) bool {
	before := len(m.Content)
	if l.Preset != "" {
		add(m, "preset", str(l.Preset))
		l = l.unpreset()
	}
	if l.Delay != nil {
		add(m, "delay", dur(*l.Delay))
	}
	if l.Jitter != nil {
		add(m, "jitter", dur(*l.Jitter))
	}
	addPct(m, "delay_correlation", l.DelayCorrelation)
	if l.Distribution != nil {
		add(m, "distribution", str(string(*l.Distribution)))
	}
	if l.Loss != nil {
		add(m, "loss", lossNode(*l.Loss))
	}
	addPct(m, "duplicate", l.Duplicate)
	addPct(m, "duplicate_correlation", l.DuplicateCorrelation)
	addPct(m, "corrupt", l.Corrupt)
	addPct(m, "corrupt_correlation", l.CorruptCorrelation)
	if r := l.Reorder; r != nil {
		n := mapping()
		add(n, "probability", pct(r.Probability))
		if r.Correlation != 0 {
			add(n, "correlation", pct(r.Correlation))
		}
		if r.Gap != 0 {
			add(n, "gap", integer(r.Gap))
		}
		add(m, "reorder", n)
	}
	if r := l.Rate; r != nil {
		n := mapping()
		add(n, "rate", str(formatRate(r.BitsPerSecond)))
		addInt(n, "packet_overhead", r.PacketOverhead)
		addInt(n, "cell_size", r.CellSize)
		addInt(n, "cell_overhead", r.CellOverhead)
		add(m, "rate", n)
	}
	if l.Limit != nil {
		add(m, "limit", integer(*l.Limit))
	}
	if c := l.CrossTraffic; c != nil {
		n := mapping()
		kind := string(c.Kind)
		if c.Kind == netem.CrossNone {
			kind = crossNone
		}
		add(n, "kind", str(kind))
		add(n, "load", pct(c.Load))
		addInt(n, "packet_size", c.PacketSize)
		if c.On != 0 || c.Off != 0 || c.Kind == netem.CrossOnOff {
			add(n, "on", dur(c.On))
			add(n, "off", dur(c.Off))
		}
		add(m, "cross_traffic", n)
	}
	return len(m.Content) > before
}

func lossNode(l Loss) *yaml.Node {
	n := mapping()
	addPct(n, "random", l.Random)
	addPct(n, "correlation", l.Correlation)
	if g := l.GEModel; g != nil {
		gn := mapping()
		add(gn, "p", pct(g.P))
		addPct(gn, "r", g.R)
		addPct(gn, "one_minus_h", g.OneMinusH)
		addPct(gn, "one_minus_k", g.OneMinusK)
		add(n, "gemodel", gn)
	}
	if st := l.State; st != nil {
		sn := mapping()
		add(sn, "p13", pct(st.P13))
		addPct(sn, "p31", st.P31)
		addPct(sn, "p32", st.P32)
		addPct(sn, "p23", st.P23)
		addPct(sn, "p14", st.P14)
		add(n, "state", sn)
	}
	return n
}

// protocolNode writes the protocol with every key of its kind, defaults
// included, in the order of protocolKeys.
func protocolNode(p Protocol) *yaml.Node {
	n := mapping()
	add(n, "kind", str(string(p.Kind)))
	switch p.Kind {
	case ProtocolNone:
		return n
	case ProtocolSync:
	default:
		add(n, "interval", dur(p.Interval))
		add(n, "payload", integer(p.Payload))
		return n
	}
	y := p.Sync
	add(n, "mode", str(string(y.Mode)))
	add(n, "estimator", str(y.Estimator))
	add(n, "cadence", dur(y.Cadence))
	add(n, "window", dur(y.Window))
	aw := mapping()
	aw.Style = yaml.FlowStyle
	add(aw, "min", dur(y.WindowMin))
	add(aw, "max", dur(y.WindowMax))
	add(n, "adaptive_window", aw)
	add(n, "rounds", integer(y.Rounds))
	add(n, "master", integer(y.Master))
	add(n, "reference", integer(y.Reference))
	add(n, "gather_deadline", dur(y.GatherDeadline))
	add(n, "heartbeat", dur(y.Heartbeat))
	add(n, "purity", str(y.Purity))
	add(n, "pure_threshold", dur(y.PureThreshold))
	add(n, "min_pairs", integer(y.MinPairs))
	add(n, "step_threshold", dur(y.StepThreshold))
	add(n, "consensus_gain", plain(formatFloat(y.ConsensusGain)))
	add(n, "converged_from", integer(y.ConvergedFrom))
	return n
}

// workloadNode writes the workload with every key of its kind, defaults
// included, in the order of workloadKeys.
func workloadNode(w Workload) *yaml.Node {
	n := mapping()
	add(n, "kind", str(string(w.Kind)))
	switch w.Kind {
	case WorkloadTraining:
	case WorkloadPhasegap:
		addPhasegap(n, w.Phasegap)
		return n
	default:
		return n
	}
	t := w.Training
	add(n, "steps", integer(t.Steps))
	add(n, "collectives_per_step", integer(t.CollectivesPerStep))
	add(n, "compute_per_step", integer(t.ComputePerStep))
	add(n, "streams", integer(t.Streams))
	add(n, "compute_duration", dur(t.ComputeDuration))
	add(n, "collective_duration", dur(t.CollectiveDuration))
	add(n, "spread", plain(formatFloat(t.Spread)))
	add(n, "launch_gap", dur(t.LaunchGap))
	add(n, "step_gap", dur(t.StepGap))
	add(n, "start_delay", dur(t.StartDelay))
	add(n, "port", integer(int(t.Port)))
	add(n, "snapshot_period", dur(t.SnapshotPeriod))
	add(n, "snapshot_capacity", integer(t.SnapshotCapacity))
	add(n, "snapshot_burst", integer(t.SnapshotBurst))
	add(n, "kineto", plain(strconv.FormatBool(t.Kineto)))
	return n
}

// addPhasegap adds the keys of a phasegap workload to n, in the order of
// phasegapKeys; costs only when it is set.
func addPhasegap(n *yaml.Node, p Phasegap) {
	q := params.Params{Settings: p.Settings}
	for _, f := range params.Fields() {
		switch {
		case !f.Scenario:
		case f.Int != nil:
			add(n, f.Key, integer(*f.Int(&q)))
		case f.Str != nil:
			add(n, f.Key, str(*f.Str(&q)))
		}
	}
	if p.Costs != "" {
		add(n, "costs", str(p.Costs))
	}
	add(n, "trace_iters", integer(p.TraceIters))
	add(n, "port", integer(int(p.Port)))
}

func faultNode(f Fault) *yaml.Node {
	n := mapping()
	add(n, "at", dur(f.At))
	add(n, "kind", str(string(f.Kind)))
	if f.Node != nil {
		add(n, "node", integer(*f.Node))
	}
	if f.RestartAfter != nil {
		add(n, "restart_after", dur(*f.RestartAfter))
	}
	if f.Groups != nil {
		groups := sequence()
		groups.Style = yaml.FlowStyle
		for _, g := range f.Groups {
			groups.Content = append(groups.Content, ints(g))
		}
		add(n, "groups", groups)
	}
	if f.HealAfter != nil {
		add(n, "heal_after", dur(*f.HealAfter))
	}
	if f.Between != nil {
		add(n, "between", ints(f.Between))
	}
	if f.From != nil {
		add(n, "from", integer(*f.From))
	}
	if f.To != nil {
		add(n, "to", integer(*f.To))
	}
	if f.Kind == FaultLinkFlap || f.Down != 0 || f.Up != 0 || f.Count != 0 {
		add(n, "down", dur(f.Down))
		add(n, "up", dur(f.Up))
		add(n, "count", integer(f.Count))
	}
	if f.Kind == FaultClockStep || f.By != 0 {
		add(n, "by", dur(f.By))
	}
	if f.Kind == FaultSlowNode || f.ExtraDelay != 0 {
		add(n, "extra_delay", dur(f.ExtraDelay))
	}
	if f.For != nil {
		add(n, "for", dur(*f.For))
	}
	return n
}
