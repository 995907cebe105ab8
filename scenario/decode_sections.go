package scenario

import (
	"path/filepath"
	"slices"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/chronosync/chronosync/model/netem"
	"github.com/chronosync/chronosync/phasegap/params"
)

// Default values the decoder fills in for keys that are not written.
const (
	defaultSeed             = 1
	defaultProtocolInterval = 100 * time.Millisecond
	defaultProtocolPayload  = 64
)

// defaultSync is the sync protocol's settings where a file writes none.
func defaultSync() Sync {
	return Sync{
		Mode:           SyncRounds,
		Estimator:      "svm",
		Cadence:        800 * time.Microsecond,
		Window:         4 * time.Second,
		GatherDeadline: 500 * time.Millisecond,
		Heartbeat:      200 * time.Millisecond,
		Purity:         "auto",
		PureThreshold:  time.Microsecond,
		MinPairs:       10,
		StepThreshold:  0,
		ConsensusGain:  0.5,
		ConvergedFrom:  3,
	}
}

// defaultTraining is the training workload's settings where a file writes
// none. ComputePerStep is 2 × CollectivesPerStep; when a file writes
// collectives_per_step but not compute_per_step, the decoder doubles the
// value written instead.
func defaultTraining() Training {
	return Training{
		Steps:              50,
		CollectivesPerStep: 8,
		ComputePerStep:     16,
		Streams:            2,
		ComputeDuration:    200 * time.Microsecond,
		CollectiveDuration: 100 * time.Microsecond,
		Spread:             0.2,
		LaunchGap:          10 * time.Microsecond,
		StepGap:            time.Millisecond,
		Port:               7200,
		SnapshotPeriod:     4 * time.Second,
		SnapshotCapacity:   4096,
		SnapshotBurst:      4,
	}
}

// The phasegap workload's defaults that are not the benchmark's own.
const (
	defaultPhasegapTraceIters = 50
	// defaultPhasegapPort is halo.Port, the stream port of package
	// workload/halo's ranks, written out: package scenario imports no
	// workload.
	defaultPhasegapPort = 7300
)

// DefaultPhasegap is the phasegap workload's settings where a file writes
// none: params.DefaultSettings for the benchmark's parameters, no costs
// file (the model's default costs), 50 traced iterations, port 7300. Code
// that builds a phasegap scenario starts from it.
func DefaultPhasegap() Phasegap { return defaultPhasegap() }

// defaultPhasegap is DefaultPhasegap.
func defaultPhasegap() Phasegap {
	return Phasegap{
		Settings:   params.DefaultSettings(),
		TraceIters: defaultPhasegapTraceIters,
		Port:       defaultPhasegapPort,
	}
}

// defaultWorkload is the workload of the given kind with its defaults
// filled in; an unknown kind has none.
func defaultWorkload(kind WorkloadKind) Workload {
	switch kind {
	case WorkloadTraining:
		return Workload{Kind: kind, Training: defaultTraining()}
	case WorkloadPhasegap:
		return Workload{Kind: kind, Phasegap: defaultPhasegap()}
	}
	return Workload{Kind: kind}
}

// defaultProtocol is the protocol of the given kind with its defaults
// filled in; an unknown kind has none.
func defaultProtocol(kind ProtocolKind) Protocol {
	switch kind {
	case ProtocolPing:
		return Protocol{Kind: kind, Interval: defaultProtocolInterval, Payload: defaultProtocolPayload}
	case ProtocolSync:
		return Protocol{Kind: kind, Sync: defaultSync()}
	}
	return Protocol{Kind: kind}
}

func (d *decoder) scenario(n *yaml.Node) *Scenario {
	s := &Scenario{
		Seed:     defaultSeed,
		Topology: Topology{Kind: FullMesh},
		Workload: defaultWorkload(WorkloadNone),
		Protocol: defaultProtocol(ProtocolPing),
	}
	m := d.fields(n, "", "name", "description", "seed", "duration", "nodes",
		"clocks", "topology", "links", "faults", "workload", "protocol", "impairment")
	if m == nil {
		return s
	}
	d.required(m, n, "", "name", "a name like quickstart")
	d.required(m, n, "", "duration", "a duration > 0 like 10s")
	d.required(m, n, "", "nodes", "a node count >= 1")
	field(m, "", "name", d.str, &s.Name)
	field(m, "", "description", d.str, &s.Description)
	field(m, "", "seed", d.uint64, &s.Seed)
	field(m, "", "duration", d.duration, &s.Duration)
	field(m, "", "nodes", d.integer, &s.Nodes)
	field(m, "", "clocks", d.clocks, &s.Clocks)
	if t, ok := m["topology"]; ok {
		d.topology(t, "topology", &s.Topology)
	}
	field(m, "", "links", d.links, &s.Links)
	field(m, "", "faults", d.faults, &s.Faults)
	if w, ok := m["workload"]; ok {
		s.Workload = d.workload(w, "workload")
	}
	if p, ok := m["protocol"]; ok {
		s.Protocol = d.protocol(p, "protocol")
	} else if s.Workload.Kind == WorkloadPhasegap {
		// A phasegap workload runs alone: no protocol is its default.
		s.Protocol = defaultProtocol(ProtocolNone)
	}
	field(m, "", "impairment", d.impairment, &s.Impairment)
	return s
}

func (d *decoder) impairment(n *yaml.Node, path string) (Impairment, bool) {
	v, ok := d.str(n, path)
	if !ok {
		return "", false
	}
	switch im := Impairment(v); im {
	case ImpairAuto, ImpairNetem, ImpairUserspace:
		return im, true
	}
	d.errorf(n, path, "unknown impairment %q; expected auto, netem or userspace", v)
	return "", false
}

// kindOf returns the text of the key kind of mapping n as written ("" if
// it is not a scalar), and whether n is a mapping with that key. Where the
// kind decides which keys a mapping may have, it is read before the keys
// are checked.
func kindOf(n *yaml.Node) (kind string, written bool) {
	if mn := deref(n); mn.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(mn.Content); i += 2 {
			if mn.Content[i].Value == "kind" {
				kind, written = deref(mn.Content[i+1]).Value, true
			}
		}
	}
	return kind, written
}

// pingKeys and syncKeys are the keys of each protocol kind besides kind,
// in the order Marshal writes them.
var (
	pingKeys = []string{"interval", "payload"}
	syncKeys = []string{"mode", "estimator", "cadence", "window", "adaptive_window", "rounds",
		"master", "reference", "gather_deadline", "heartbeat", "purity", "pure_threshold",
		"min_pairs", "step_threshold", "consensus_gain", "converged_from"}
)

// protocolKeys are the keys a protocol of the given kind may have. An
// unknown kind allows every key, so that the only error reported is the
// kind's.
func protocolKeys(kind ProtocolKind) []string {
	keys := []string{"kind"}
	switch kind {
	case ProtocolPing:
		return append(keys, pingKeys...)
	case ProtocolSync:
		return append(keys, syncKeys...)
	case ProtocolNone:
		return keys
	}
	return slices.Concat(keys, pingKeys, syncKeys)
}

// protocolOwner names the protocol kind a key belongs to, or "".
func protocolOwner(k string) string {
	switch {
	case slices.Contains(pingKeys, k):
		return string(ProtocolPing)
	case slices.Contains(syncKeys, k):
		return string(ProtocolSync)
	}
	return ""
}

// protocol decodes the protocol section: its kind (default ping) decides
// which keys it may have and which defaults are filled in.
func (d *decoder) protocol(n *yaml.Node, path string) Protocol {
	kind := ProtocolPing
	if k, ok := kindOf(n); ok {
		kind = ProtocolKind(k)
	}
	m := d.kindFields(n, path, string(kind), protocolOwner, protocolKeys(kind))
	field(m, path, "kind", d.str, (*string)(&kind))
	p := defaultProtocol(kind)
	field(m, path, "interval", d.duration, &p.Interval)
	field(m, path, "payload", d.integer, &p.Payload)
	y := &p.Sync
	field(m, path, "mode", d.str, (*string)(&y.Mode))
	field(m, path, "estimator", d.str, &y.Estimator)
	field(m, path, "cadence", d.duration, &y.Cadence)
	field(m, path, "window", d.duration, &y.Window)
	if aw, ok := m["adaptive_window"]; ok {
		ap := key(path, "adaptive_window")
		am := d.fields(aw, ap, "min", "max")
		d.required(am, aw, ap, "min", "the shortest window, like 1s")
		d.required(am, aw, ap, "max", "the longest window, like 8s")
		field(am, ap, "min", d.duration, &y.WindowMin)
		field(am, ap, "max", d.duration, &y.WindowMax)
	}
	field(m, path, "rounds", d.integer, &y.Rounds)
	field(m, path, "master", d.integer, &y.Master)
	field(m, path, "reference", d.integer, &y.Reference)
	field(m, path, "gather_deadline", d.duration, &y.GatherDeadline)
	field(m, path, "heartbeat", d.duration, &y.Heartbeat)
	field(m, path, "purity", d.str, &y.Purity)
	field(m, path, "pure_threshold", d.duration, &y.PureThreshold)
	field(m, path, "min_pairs", d.integer, &y.MinPairs)
	field(m, path, "step_threshold", d.duration, &y.StepThreshold)
	field(m, path, "consensus_gain", d.number, &y.ConsensusGain)
	field(m, path, "converged_from", d.integer, &y.ConvergedFrom)
	return p
}

// trainingKeys are the keys of a training workload besides kind, in the
// order Marshal writes them.
var trainingKeys = []string{"steps", "collectives_per_step", "compute_per_step", "streams",
	"compute_duration", "collective_duration", "spread", "launch_gap", "step_gap",
	"start_delay", "port", "snapshot_period", "snapshot_capacity", "snapshot_burst", "kineto"}

// phasegapKeys are the keys of a phasegap workload besides kind, in the
// order Marshal writes them: the scenario's fields of package params's
// table, then the simulation's own (costs, trace_iters, port).
var phasegapKeys = func() []string {
	var keys []string
	for _, f := range params.Fields() {
		if f.Scenario {
			keys = append(keys, f.Key)
		}
	}
	return append(keys, "costs", "trace_iters", "port")
}()

// workloadKeys are the keys a workload of the given kind may have. An
// unknown kind allows every key, so that the only error reported is the
// kind's.
func workloadKeys(kind WorkloadKind) []string {
	keys := []string{"kind"}
	switch kind {
	case WorkloadNone:
		return keys
	case WorkloadTraining:
		return append(keys, trainingKeys...)
	case WorkloadPhasegap:
		return append(keys, phasegapKeys...)
	}
	keys = append(keys, trainingKeys...)
	for _, k := range phasegapKeys {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

// workloadOwner names the workload kind a key belongs to, or "". A key of
// both kinds (port) names both.
func workloadOwner(k string) string {
	training, pg := slices.Contains(trainingKeys, k), slices.Contains(phasegapKeys, k)
	switch {
	case training && pg:
		return string(WorkloadTraining) + " or " + string(WorkloadPhasegap)
	case training:
		return string(WorkloadTraining)
	case pg:
		return string(WorkloadPhasegap)
	}
	return ""
}

// workload decodes the workload section: its kind (default none) decides
// which keys it may have and which defaults are filled in.
func (d *decoder) workload(n *yaml.Node, path string) Workload {
	kind := WorkloadNone
	if k, ok := kindOf(n); ok {
		kind = WorkloadKind(k)
	}
	m := d.kindFields(n, path, string(kind), workloadOwner, workloadKeys(kind))
	field(m, path, "kind", d.str, (*string)(&kind))
	w := defaultWorkload(kind)
	t := &w.Training
	field(m, path, "steps", d.integer, &t.Steps)
	field(m, path, "collectives_per_step", d.integer, &t.CollectivesPerStep)
	// compute_per_step defaults to twice the collectives written; where
	// those are out of range, it keeps its default, so that the only error
	// reported is collectives_per_step's.
	if c := t.CollectivesPerStep; kind == WorkloadTraining && c >= 1 && c <= maxTrainingCollectives {
		t.ComputePerStep = 2 * c
	}
	field(m, path, "compute_per_step", d.integer, &t.ComputePerStep)
	field(m, path, "streams", d.integer, &t.Streams)
	field(m, path, "compute_duration", d.duration, &t.ComputeDuration)
	field(m, path, "collective_duration", d.duration, &t.CollectiveDuration)
	field(m, path, "spread", d.number, &t.Spread)
	field(m, path, "launch_gap", d.duration, &t.LaunchGap)
	field(m, path, "step_gap", d.duration, &t.StepGap)
	field(m, path, "start_delay", d.duration, &t.StartDelay)
	port := &t.Port // a key of both kinds: decode it once
	if kind == WorkloadPhasegap {
		port = &w.Phasegap.Port
	}
	field(m, path, "port", d.port, port)
	field(m, path, "snapshot_period", d.duration, &t.SnapshotPeriod)
	field(m, path, "snapshot_capacity", d.integer, &t.SnapshotCapacity)
	field(m, path, "snapshot_burst", d.integer, &t.SnapshotBurst)
	field(m, path, "kineto", d.boolean, &t.Kineto)
	d.phasegap(m, path, &w.Phasegap)
	return w
}

// phasegap decodes the keys of a phasegap workload into *p, which holds
// the defaults.
func (d *decoder) phasegap(m map[string]*yaml.Node, path string, p *Phasegap) {
	q := params.Params{Settings: p.Settings}
	for _, f := range params.Fields() {
		switch {
		case !f.Scenario:
		case f.Int != nil:
			field(m, path, f.Key, d.integer, f.Int(&q))
		case f.Str != nil:
			field(m, path, f.Key, d.str, f.Str(&q))
		}
	}
	p.Settings = q.Settings
	field(m, path, "costs", d.str, &p.Costs)
	p.CostsPath = p.Costs
	if p.Costs != "" && d.dir != "" && !filepath.IsAbs(p.Costs) {
		p.CostsPath = filepath.Join(d.dir, p.Costs)
	}
	field(m, path, "trace_iters", d.integer, &p.TraceIters)
	// port is decoded with the training keys: it is a key of both kinds.
}

// port decodes a port number, 1..65535.
func (d *decoder) port(n *yaml.Node, path string) (uint16, bool) {
	v, ok := d.integer(n, path)
	if !ok {
		return 0, false
	}
	if v < 1 || v > 65535 {
		d.errorf(deref(n), path, "port %d is out of range; expected a port number from 1 to 65535", v)
		return 0, false
	}
	return uint16(v), true
}

func (d *decoder) topology(n *yaml.Node, path string, t *Topology) {
	m := d.fields(n, path, "kind", "hub", "degree")
	field(m, path, "kind", d.str, (*string)(&t.Kind))
	field(m, path, "hub", d.integer, &t.Hub)
	field(m, path, "degree", d.integer, &t.Degree)
}

// clockKeys are the keys of a clock spec, in the order Marshal writes them.
func clockKeys() []string {
	return []string{"offset", "drift_ppm", "wander_ppm", "wander_step", "wander_limit_ppm",
		"periodic_ppm", "periodic_period", "granularity", "read_noise", "steps", "tracer"}
}

func (d *decoder) clocks(n *yaml.Node, path string) (Clocks, bool) {
	var c Clocks
	m := d.fields(n, path, "default", "nodes")
	if def, ok := m["default"]; ok {
		p := key(path, "default")
		c.Default = d.clockSpec(d.fields(def, p, clockKeys()...), p)
	}
	if nodes, ok := m["nodes"]; ok {
		p := key(path, "nodes")
		items, _ := d.seq(nodes, p, "per-node clock overrides")
		for i, it := range items {
			ip := index(p, i)
			im := d.fields(it, ip, append([]string{"node"}, clockKeys()...)...)
			d.required(im, it, ip, "node", "the node number this override applies to")
			nc := NodeClock{ClockSpec: d.clockSpec(im, ip)}
			field(im, ip, "node", d.integer, &nc.Node)
			c.Nodes = append(c.Nodes, nc)
		}
	}
	return c, true
}

func (d *decoder) clockSpec(m map[string]*yaml.Node, path string) ClockSpec {
	var c ClockSpec
	optional(m, path, "offset", d.durSpec, &c.Offset)
	optional(m, path, "drift_ppm", d.numSpec, &c.DriftPPM)
	optional(m, path, "wander_ppm", d.numSpec, &c.WanderPPM)
	optional(m, path, "wander_step", d.durSpec, &c.WanderStep)
	optional(m, path, "wander_limit_ppm", d.numSpec, &c.WanderLimitPPM)
	optional(m, path, "periodic_ppm", d.numSpec, &c.PeriodicPPM)
	optional(m, path, "periodic_period", d.durSpec, &c.PeriodicPeriod)
	optional(m, path, "granularity", d.durSpec, &c.Granularity)
	optional(m, path, "read_noise", d.durSpec, &c.ReadNoise)
	field(m, path, "steps", d.steps, &c.Steps)
	optional(m, path, "tracer", d.tracer, &c.Tracer)
	return c
}

func (d *decoder) steps(n *yaml.Node, path string) ([]Step, bool) {
	items, ok := d.seq(n, path, "steps {at, by}")
	if !ok {
		return nil, false
	}
	steps := make([]Step, 0, len(items))
	for i, it := range items {
		ip := index(path, i)
		m := d.fields(it, ip, "at", "by")
		d.required(m, it, ip, "at", "the true time of the step")
		d.required(m, it, ip, "by", "the signed size of the step")
		var s Step
		field(m, ip, "at", d.duration, &s.At)
		field(m, ip, "by", d.duration, &s.By)
		steps = append(steps, s)
	}
	return steps, true
}

func (d *decoder) tracer(n *yaml.Node, path string) (TracerSpec, bool) {
	var t TracerSpec
	m := d.fields(n, path, "offset", "drift_ppm", "granularity", "read_noise")
	optional(m, path, "offset", d.durSpec, &t.Offset)
	optional(m, path, "drift_ppm", d.numSpec, &t.DriftPPM)
	optional(m, path, "granularity", d.durSpec, &t.Granularity)
	optional(m, path, "read_noise", d.durSpec, &t.ReadNoise)
	return t, m != nil
}

// linkKeys are the keys of a link spec, in the order Marshal writes them.
func linkKeys() []string {
	return []string{"preset", "delay", "jitter", "delay_correlation", "distribution", "loss",
		"duplicate", "duplicate_correlation", "corrupt", "corrupt_correlation",
		"reorder", "rate", "limit", "cross_traffic"}
}

func (d *decoder) links(n *yaml.Node, path string) (Links, bool) {
	var l Links
	m := d.fields(n, path, "default", "overrides", "nic")
	if def, ok := m["default"]; ok {
		p := key(path, "default")
		l.Default = d.linkSpec(d.fields(def, p, linkKeys()...), p)
	}
	field(m, path, "nic", d.rate, &l.NICRate)
	if ov, ok := m["overrides"]; ok {
		p := key(path, "overrides")
		items, _ := d.seq(ov, p, "link overrides")
		for i, it := range items {
			ip := index(p, i)
			im := d.fields(it, ip, append([]string{"from", "to", "between"}, linkKeys()...)...)
			o := LinkOverride{LinkSpec: d.linkSpec(im, ip)}
			optional(im, ip, "from", d.integer, &o.From)
			optional(im, ip, "to", d.integer, &o.To)
			field(im, ip, "between", d.ints, &o.Between)
			l.Overrides = append(l.Overrides, o)
		}
	}
	return l, true
}

// linkSpec decodes a link spec: the fields of its preset, if it names
// one, replaced by the fields written beside it.
func (d *decoder) linkSpec(m map[string]*yaml.Node, path string) LinkSpec {
	var l LinkSpec
	if n, ok := m["preset"]; ok {
		p := key(path, "preset")
		if name, ok := d.str(n, p); ok {
			if preset, ok := LinkPreset(name); ok {
				l = preset
			} else {
				d.errorf(deref(n), p, "unknown link preset %q; expected one of %s", name, presetList())
			}
		}
	}
	optional(m, path, "delay", d.duration, &l.Delay)
	optional(m, path, "jitter", d.duration, &l.Jitter)
	optional(m, path, "delay_correlation", d.percent, &l.DelayCorrelation)
	optional(m, path, "distribution", d.distribution, &l.Distribution)
	optional(m, path, "loss", d.loss, &l.Loss)
	optional(m, path, "duplicate", d.percent, &l.Duplicate)
	optional(m, path, "duplicate_correlation", d.percent, &l.DuplicateCorrelation)
	optional(m, path, "corrupt", d.percent, &l.Corrupt)
	optional(m, path, "corrupt_correlation", d.percent, &l.CorruptCorrelation)
	optional(m, path, "reorder", d.reorder, &l.Reorder)
	optional(m, path, "rate", d.rateBlock, &l.Rate)
	optional(m, path, "limit", d.integer, &l.Limit)
	optional(m, path, "cross_traffic", d.cross, &l.CrossTraffic)
	return l
}

func (d *decoder) distribution(n *yaml.Node, path string) (netem.Distribution, bool) {
	s, ok := d.str(n, path)
	return netem.Distribution(s), ok
}

func (d *decoder) loss(n *yaml.Node, path string) (Loss, bool) {
	var l Loss
	m := d.fields(n, path, "random", "correlation", "gemodel", "state")
	optional(m, path, "random", d.percent, &l.Random)
	optional(m, path, "correlation", d.percent, &l.Correlation)
	if g, ok := m["gemodel"]; ok {
		p := key(path, "gemodel")
		gm := d.fields(g, p, "p", "r", "one_minus_h", "one_minus_k")
		d.required(gm, g, p, "p", "the good-to-bad transition probability, like 1%")
		var ge GEModel
		field(gm, p, "p", d.percent, &ge.P)
		optional(gm, p, "r", d.percent, &ge.R)
		optional(gm, p, "one_minus_h", d.percent, &ge.OneMinusH)
		optional(gm, p, "one_minus_k", d.percent, &ge.OneMinusK)
		l.GEModel = &ge
	}
	if st, ok := m["state"]; ok {
		p := key(path, "state")
		sm := d.fields(st, p, "p13", "p31", "p32", "p23", "p14")
		d.required(sm, st, p, "p13", "the probability of entering the burst-loss state, like 1%")
		var s StateLoss
		field(sm, p, "p13", d.percent, &s.P13)
		optional(sm, p, "p31", d.percent, &s.P31)
		optional(sm, p, "p32", d.percent, &s.P32)
		optional(sm, p, "p23", d.percent, &s.P23)
		optional(sm, p, "p14", d.percent, &s.P14)
		l.State = &s
	}
	return l, m != nil
}

func (d *decoder) reorder(n *yaml.Node, path string) (Reorder, bool) {
	var r Reorder
	m := d.fields(n, path, "probability", "correlation", "gap")
	d.required(m, n, path, "probability", "a percentage like 25%")
	field(m, path, "probability", d.percent, &r.Probability)
	field(m, path, "correlation", d.percent, &r.Correlation)
	field(m, path, "gap", d.integer, &r.Gap)
	return r, m != nil
}

func (d *decoder) rateBlock(n *yaml.Node, path string) (Rate, bool) {
	var r Rate
	m := d.fields(n, path, "rate", "packet_overhead", "cell_size", "cell_overhead")
	d.required(m, n, path, "rate", "a rate like 1gbit")
	field(m, path, "rate", d.rate, &r.BitsPerSecond)
	field(m, path, "packet_overhead", d.integer, &r.PacketOverhead)
	field(m, path, "cell_size", d.integer, &r.CellSize)
	field(m, path, "cell_overhead", d.integer, &r.CellOverhead)
	return r, m != nil
}

// crossNone is how CrossNone is written.
const crossNone = "none"

func (d *decoder) cross(n *yaml.Node, path string) (CrossTraffic, bool) {
	var c CrossTraffic
	m := d.fields(n, path, "kind", "load", "packet_size", "on", "off")
	d.required(m, n, path, "kind", "poisson, onoff or none")
	var kind string
	field(m, path, "kind", d.str, &kind)
	if kind != crossNone {
		c.Kind = netem.CrossKind(kind)
	}
	field(m, path, "load", d.percent, &c.Load)
	field(m, path, "packet_size", d.integer, &c.PacketSize)
	field(m, path, "on", d.duration, &c.On)
	field(m, path, "off", d.duration, &c.Off)
	return c, m != nil
}

// faultKeys are the keys a fault of the given kind may have, in the order
// Marshal writes them. An unknown kind allows every key, so that the only
// error reported is the kind's.
func faultKeys(kind FaultKind) []string {
	keys := []string{"at", "kind"}
	switch kind {
	case FaultCrash:
		return append(keys, "node", "restart_after")
	case FaultPartition:
		return append(keys, "groups", "heal_after")
	case FaultLinkFlap:
		return append(keys, "between", "from", "to", "down", "up", "count")
	case FaultClockStep:
		return append(keys, "node", "by")
	case FaultSlowNode:
		return append(keys, "node", "extra_delay", "for")
	}
	return append(keys, "node", "restart_after", "groups", "heal_after", "between", "from", "to",
		"down", "up", "count", "by", "extra_delay", "for")
}

func (d *decoder) faults(n *yaml.Node, path string) ([]Fault, bool) {
	items, ok := d.seq(n, path, "faults")
	if !ok {
		return nil, false
	}
	var faults []Fault
	for i, it := range items {
		faults = append(faults, d.fault(it, index(path, i)))
	}
	return faults, true
}

func (d *decoder) fault(n *yaml.Node, path string) Fault {
	// The kind decides which keys are allowed, so read it first.
	kind, _ := kindOf(n)
	f := Fault{Kind: FaultKind(kind)}
	m := d.fields(n, path, faultKeys(f.Kind)...)
	d.required(m, n, path, "at", "the true time of the fault, like 2s")
	d.required(m, n, path, "kind", "one of crash, partition, link_flap, clock_step, slow_node")
	field(m, path, "at", d.duration, &f.At)
	field(m, path, "kind", d.str, (*string)(&f.Kind))
	optional(m, path, "node", d.integer, &f.Node)
	optional(m, path, "restart_after", d.duration, &f.RestartAfter)
	field(m, path, "groups", d.groups, &f.Groups)
	optional(m, path, "heal_after", d.duration, &f.HealAfter)
	field(m, path, "between", d.ints, &f.Between)
	optional(m, path, "from", d.integer, &f.From)
	optional(m, path, "to", d.integer, &f.To)
	field(m, path, "down", d.duration, &f.Down)
	field(m, path, "up", d.duration, &f.Up)
	if f.Kind == FaultLinkFlap {
		f.Count = 1
	}
	field(m, path, "count", d.integer, &f.Count)
	field(m, path, "by", d.duration, &f.By)
	field(m, path, "extra_delay", d.duration, &f.ExtraDelay)
	optional(m, path, "for", d.duration, &f.For)
	return f
}

func (d *decoder) groups(n *yaml.Node, path string) ([][]int, bool) {
	items, ok := d.seq(n, path, "groups of node numbers")
	if !ok {
		return nil, false
	}
	groups := make([][]int, 0, len(items))
	for i, it := range items {
		g, ok := d.ints(it, index(path, i))
		if !ok {
			return nil, false
		}
		groups = append(groups, g)
	}
	return groups, true
}
