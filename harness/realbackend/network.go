//go:build linux

package realbackend

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/chronosync/chronosync/harness/engine"
	"github.com/chronosync/chronosync/model/netem"
	"github.com/chronosync/chronosync/real"
	"github.com/chronosync/chronosync/real/netlab"
	"github.com/chronosync/chronosync/real/shaper"
	"github.com/chronosync/chronosync/scenario"
)

// Network is a real run's namespaces and, when links are impaired, the
// shaper relaying between them. Other programs (the reference daemons of
// peers) can run on the same links.
type Network struct {
	lab    *netlab.Lab
	shaper *shaper.Process
	// shaperStopped: shaper has stopped and its counters are final.
	shaperStopped bool
	impairment    string
	log           io.Writer // the run log
}

// impaired reports whether any link of the scenario has parameters that
// only a shaper can apply.
func impaired(r *scenario.Resolved) bool {
	if r.DefaultLink != (netem.Params{}) {
		return true
	}
	for _, e := range r.Edges {
		if e.Link != (netem.Params{}) {
			return true
		}
	}
	return false
}

// StartNetwork builds the namespaces and links of sc (at its own seed) as
// a real run would, logging to log (nil discards). Close removes them.
func StartNetwork(sc *scenario.Scenario, log io.Writer) (*Network, error) {
	r, err := sc.Resolve(sc.Seed)
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = io.Discard
	}
	return startNetwork(sc, r, &lockedWriter{w: log})
}

// Lab returns the network's namespaces.
func (n *Network) Lab() *netlab.Lab { return n.lab }

// Impairment names what applies the links' parameters: none or userspace.
func (n *Network) Impairment() string { return n.impairment }

func startNetwork(sc *scenario.Scenario, r *scenario.Resolved, log io.Writer) (*Network, error) {
	if err := netlab.Available(); err != nil {
		return nil, fmt.Errorf("the real backend needs network namespaces (run as root): %w", err)
	}
	kind, impairment := netlab.Bridge, "none"
	switch {
	case impaired(r) || linkFaults(r):
		kind, impairment = netlab.Relay, "userspace"
	case len(r.Nodes) == 2:
		kind = netlab.Direct
	}
	lab, err := netlab.Create(netlab.Config{Prefix: netlab.NewPrefix(), Nodes: len(r.Nodes), Kind: kind})
	if err != nil {
		return nil, err
	}
	n := &Network{lab: lab, impairment: impairment, log: log}
	fmt.Fprintf(log, "real backend: namespaces %s-n0..%s-n%d (%s topology, impairment %s); after a crash remove them with: chronosync netns sweep --prefix %s\n",
		lab.Prefix(), lab.Prefix(), len(r.Nodes)-1, kind, impairment, lab.Prefix())
	if kind != netlab.Relay {
		return n, nil
	}
	var ports []shaper.Port
	err = lab.DoSwitch(func() error {
		for _, name := range lab.SwitchPorts() {
			p, err := shaper.OpenPacketPort(name)
			if err != nil {
				return err
			}
			ports = append(ports, p)
		}
		return nil
	})
	if err == nil {
		// StartProcess closes the ports, whatever happens.
		n.shaper, err = shaper.StartProcess(ports, shaper.Config{Links: linkModel(r), Seed: sc.Seed}, log)
	} else {
		for _, p := range ports {
			p.Close()
		}
	}
	if err != nil {
		return nil, errors.Join(err, lab.Close())
	}
	return n, nil
}

// linkModel gives the shaper the scenario's links: a topology edge's own
// parameters, else the default link (the rest of the network), as the
// simulator does.
func linkModel(r *scenario.Resolved) func(from, to int) (netem.Params, bool) {
	edges := make(map[[2]int]netem.Params, len(r.Edges))
	for _, e := range r.Edges {
		edges[[2]int{e.From, e.To}] = e.Link
	}
	return func(from, to int) (netem.Params, bool) {
		if p, ok := edges[[2]int{from, to}]; ok {
			return p, true
		}
		return r.DefaultLink, true
	}
}

// Close stops the shaper, then removes the namespaces, whatever happened.
func (n *Network) Close() error {
	return errors.Join(n.stopShaper(), n.lab.Close())
}

// stopShaper stops the shaper, if any and not yet stopped, and logs its
// counters; its Stats are valid from then on.
func (n *Network) stopShaper() error {
	if n.shaper == nil || n.shaperStopped {
		return nil
	}
	n.shaperStopped = true
	err := n.shaper.Stop()
	n.logStats()
	if err != nil {
		return fmt.Errorf("shaper: %w", err)
	}
	return nil
}

// logStats writes the shaper's per-link counters and release lateness to
// the run log.
func (n *Network) logStats() {
	info := n.shaper.Info()
	fmt.Fprintf(n.log, "shaper: real-time %v, frames dated by the kernel %d, by the clock %d, releases slept for the spin cap %d\n",
		info.RealTime, info.KernelStamps, info.ClockStamps, info.SpinCapped)
	fmt.Fprintf(n.log, "shaper: wake lateness p50 %v p99 %v max %v; frame read lag p50 %v p99 %v max %v\n",
		info.WakeLate.P50, info.WakeLate.P99, info.WakeLate.Max, info.ReadLag.P50, info.ReadLag.P99, info.ReadLag.Max)
	for _, st := range n.shaper.Stats() {
		if !st.Connected || st.Sent == 0 {
			continue
		}
		fmt.Fprintf(n.log, "shaper: link %d->%d: sent %d delivered %d lost %d queue-dropped %d cross %d; written %d write-dropped %d; release lateness p50 %v p99 %v max %v\n",
			st.From, st.To, st.Sent, st.Delivered, st.Lost, st.QueueDropped, st.CrossSent, st.Written, st.WriteDropped, st.Late.P50, st.Late.P99, st.Late.Max)
	}
}

// stats are the shaper's link counters, as the simulator's would be.
func (n *Network) stats(w *real.World) engine.NetworkStats {
	out := engine.NetworkStats{Dropped: worldDrops(w)}
	if n.shaper == nil {
		return out
	}
	var partitioned, down uint64
	for _, st := range n.shaper.Stats() {
		out.Add(st.Stats)
		partitioned += st.Partitioned
		down += st.LinkDown
	}
	for why, k := range map[string]uint64{"loss": out.Lost, "queue": out.QueueDrops, "partition": partitioned, "linkdown": down} {
		if k > 0 {
			out.Dropped[why] = k
		}
	}
	return out
}

func (n *Network) lateP99() int64 {
	var worst time.Duration
	if n.shaper != nil {
		for _, st := range n.shaper.Stats() {
			worst = max(worst, st.Late.P99)
		}
	}
	return int64(worst)
}

// lockedWriter serialises writes to the run log.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
