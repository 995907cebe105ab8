package simbackend

import (
	"github.com/chronosync/chronosync/scenario"
	"github.com/chronosync/chronosync/sim"
)

// Config turns a resolved scenario into the simulator's configuration.
func Config(seed uint64, r *scenario.Resolved) sim.Config {
	cfg := sim.Config{Seed: seed, DefaultLink: r.DefaultLink, NICRate: r.NICRate}
	for _, n := range r.Nodes {
		cfg.Nodes = append(cfg.Nodes, sim.NodeConfig{Clock: n.Clock, Tracer: n.Tracer})
	}
	for _, e := range r.Edges {
		cfg.Links = append(cfg.Links, sim.LinkConfig{From: e.From, To: e.To, Params: e.Link})
	}
	for _, f := range r.Faults {
		cfg.Faults = append(cfg.Faults, fault(f))
	}
	return cfg
}

// fault is a scenario's fault as the simulator schedules it.
func fault(f scenario.Fault) sim.Fault {
	out := sim.Fault{
		At:         f.At,
		Kind:       sim.FaultKind(f.Kind),
		Groups:     f.Groups,
		Down:       f.Down,
		Up:         f.Up,
		Count:      f.Count,
		By:         f.By,
		ExtraDelay: f.ExtraDelay,
	}
	if f.Node != nil {
		out.Node = *f.Node
	}
	if f.RestartAfter != nil {
		out.RestartAfter = *f.RestartAfter
	}
	if f.HealAfter != nil {
		out.HealAfter = *f.HealAfter
	}
	if f.For != nil {
		out.For = *f.For
	}
	switch {
	case len(f.Between) == 2:
		out.From, out.To, out.Both = f.Between[0], f.Between[1], true
	case f.From != nil && f.To != nil:
		out.From, out.To = *f.From, *f.To
	}
	return out
}
