package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/analysis/selfcheck"
	"github.com/chronosync/chronosync/harness"
	"github.com/chronosync/chronosync/metrics"
	"github.com/chronosync/chronosync/model/clockmodel"
	"github.com/chronosync/chronosync/nodestatus"
	"github.com/chronosync/chronosync/ntpshm"
	"github.com/chronosync/chronosync/probe/probelog"
	"github.com/chronosync/chronosync/rounds"
	"github.com/chronosync/chronosync/rounds/syncpb"
	"github.com/chronosync/chronosync/scenario"
	"github.com/chronosync/chronosync/timepage"
	"github.com/chronosync/chronosync/world"
)

// deadlineRounds is how many round periods a published model stays valid:
// a node that misses two rounds in a row still serves its host; one that
// misses three is stale.
const deadlineRounds = 3

// chronyInterval is how often a node writes chrony's SHM segment between
// rounds: chrony reads the last sample once per 2^dpoll s and drops one
// older than 2^(poll+1) s, so a sample evaluated at a fresh clock reading
// goes there every second (docs/node-service.md, "Feeding chrony").
const chronyInterval = time.Second

// hostServices are what `chronosync node` serves its host besides its run
// (its flags): the time page, chrony's SHM refclock, Prometheus metrics
// and the status socket. A zero field turns its service off.
type hostServices struct {
	// TimePage is the path of the shared-memory time page ("": none).
	// TimePageDefault says it is the default path, not one the operator
	// named: another publisher there (a node of another cluster of the
	// same name and rank on this host) is then warned about and the node
	// runs without a page, where a named page is an error.
	TimePage        string
	TimePageDefault bool
	// ChronyUnit is the NTP SHM unit fed to chrony (< 0: none).
	ChronyUnit int
	// MetricsAddr is the host:port metrics are served on ("": none).
	MetricsAddr string
	// StatusSocket is the path of the status socket ("": none).
	StatusSocket string
}

// nodeServiceConfig is what a node's host services need to know of the
// node and its cluster.
type nodeServiceConfig struct {
	hostServices
	// Log receives the services' log.
	Log *slog.Logger
	// Rank is this node, Master whether it is the cluster's master.
	Rank   int
	Master bool
	// Status is the status answered before the first round (node,
	// addresses, cluster file, pid, start).
	Status nodestatus.Status
	// Addresses are the cluster's nodes' addresses by rank, for the
	// status's peers (nil: none shown).
	Addresses []string
	// Deadline is how long a model is valid after it arrived.
	Deadline time.Duration
	// ClockDelta is the node's host clock S minus CLOCK_REALTIME, in ns
	// (0 on a production host; the scenario's injected offset on the
	// testbed). SNotRealtime says S is not CLOCK_REALTIME, or may not be
	// (an injected offset or step), and why.
	ClockDelta   int64
	SNotRealtime string
}

// nodeService publishes a running node's clock model to its host after
// every round: the time page, chrony's segment, metrics and the status
// socket. The run's hooks (harness.Options.OnModel, OnRound, OnWindow,
// OnStats) feed it from the node's event loop; a goroutine of its own
// writes chrony's segment every second and notices when the model goes
// stale. Real nodes only: the simulator never makes one.
type nodeService struct {
	cfg nodeServiceConfig
	log *slog.Logger

	pageLock *os.File // flock(2) held on the page file: one publisher
	page     *timepage.FilePage
	pub      *timepage.Publisher
	shm      *ntpshm.Segment
	mx       *metrics.Metrics
	srv      *nodestatus.Server

	cancel   context.CancelFunc
	wg       sync.WaitGroup
	serveErr chan error // the metrics server's end
	wake     chan struct{}

	mu        sync.Mutex
	closed    bool
	model     *rounds.Model // the latest, nil before the first round
	validTill int64         // its deadline, on S
	stale     bool          // the latest model's deadline passed (logged once)
	status    nodestatus.Status
	shmErrs   int        // consecutive chrony write errors (logged at the first)
	peers     *peerTable // the status's peers
}

// startNodeService starts the host services cfg asks for, after the node
// took its host lock and before its run starts. On error it stops what it
// started. Close it on every exit path.
func startNodeService(cfg nodeServiceConfig) (_ *nodeService, err error) {
	s := &nodeService{cfg: cfg, log: cfg.Log, wake: make(chan struct{}, 1), status: cfg.Status,
		peers: newPeerTable(cfg.Rank, cfg.Addresses, cfg.ClockDelta)}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, s.Close())
		}
	}()
	if cfg.SNotRealtime != "" && (cfg.TimePage != "" || cfg.ChronyUnit >= 0) {
		s.log.Warn("this node's host clock is not CLOCK_REALTIME: the time page's readers, which read CLOCK_REALTIME, are off by the difference (chrony's samples are corrected for its constant part)",
			"reason", cfg.SNotRealtime, "clock_minus_realtime_ns", cfg.ClockDelta)
	}
	if cfg.TimePage != "" {
		err := s.openPage(cfg.TimePage)
		var busy *pageBusyError
		switch {
		case errors.As(err, &busy) && cfg.TimePageDefault:
			s.log.Warn("no time page: another process publishes to the default one; give this node --timepage PATH", "path", cfg.TimePage, "err", err)
			s.cfg.TimePage = ""
		case err != nil:
			return nil, err
		default:
			s.log.Info("time page", "path", cfg.TimePage, "valid_for", cfg.Deadline)
		}
	}
	if cfg.ChronyUnit >= 0 {
		if s.shm, err = ntpshm.Open(cfg.ChronyUnit); err != nil {
			return nil, fmt.Errorf("--chrony-shm %d: %w", cfg.ChronyUnit, err)
		}
		s.log.Info("feeding chrony", "unit", cfg.ChronyUnit, "key", fmt.Sprintf("%#x", s.shm.Key()), "created", s.shm.Created(),
			"chrony.conf", fmt.Sprintf("refclock SHM %d refid CSYN poll 2 dpoll 0 precision 1e-7", cfg.ChronyUnit))
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	if cfg.MetricsAddr != "" {
		s.mx = metrics.New(cfg.Rank, cfg.Master)
		ln, err := metrics.Listen(cfg.MetricsAddr)
		if err != nil {
			return nil, fmt.Errorf("--metrics %s: %w", cfg.MetricsAddr, err)
		}
		s.log.Info("serving metrics", "address", ln.Addr().String(), "url", "http://"+ln.Addr().String()+metrics.Path)
		s.serveErr = make(chan error, 1)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			err := metrics.ServeListener(ctx, ln, s.mx)
			if err != nil {
				s.log.Error("metrics server stopped", "address", ln.Addr().String(), "err", err)
			}
			s.serveErr <- err
		}()
	}
	if cfg.StatusSocket != "" {
		s.srv, err = nodestatus.Listen(cfg.StatusSocket, nodestatus.Options{
			Logger: s.log, Notify: os.Getenv(nodestatus.EnvNotifySocket) != "", Initial: cfg.Status,
		})
		if err != nil {
			return nil, fmt.Errorf("--status-socket %s: %w", cfg.StatusSocket, err)
		}
	}
	s.wg.Add(1)
	go s.tick(ctx)
	return s, nil
}

// openPage takes the page file's lock, so that two nodes never publish to
// one page (two clusters of one name on a host, or --timepage given
// twice), then maps it and starts its publisher.
func (s *nodeService) openPage(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, timepage.FileMode)
	if err != nil {
		return fmt.Errorf("time page %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return &pageBusyError{path: path}
		}
		return fmt.Errorf("time page %s: flock: %w", path, err)
	}
	s.pageLock = f
	if s.page, err = timepage.CreateFile(path); err != nil {
		return err
	}
	if s.pub, err = timepage.NewPublisher(s.page, os.Getpid()); err != nil {
		return fmt.Errorf("time page %s: %w", path, err)
	}
	return nil
}

// pageBusyError says that another process holds a time page's lock.
type pageBusyError struct{ path string }

func (e *pageBusyError) Error() string {
	return fmt.Sprintf("time page %s: another process publishes to it (flock held): a node of another cluster of the same name and rank on this host? give this one --timepage PATH, or --no-timepage", e.path)
}

// OnModel is the node's harness.Options.OnModel: it publishes the node's
// model of the round to the page, metrics and the status socket, and
// wakes the goroutine that writes chrony's segment. It runs on the node's
// event loop and returns at once (no I/O but the page's stores, a few
// metric updates and, under systemd, one notification datagram).
func (s *nodeService) OnModel(node world.NodeID, m rounds.Model) {
	if int(node) != s.cfg.Rank {
		return
	}
	state, reason := modelState(m)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	mc := m
	s.model, s.validTill = &mc, m.ReceivedAt+int64(s.cfg.Deadline)
	if s.stale {
		s.log.Info("model valid again", "round", m.Offset.RoundID)
		s.stale = false
	}
	if s.pub != nil {
		ps := timepage.StatusOK
		if state == nodestatus.StateDegraded {
			ps = timepage.StatusDegraded
		}
		if err := s.pub.Publish(timepage.FromOffset(m.Offset, m.Reference, m.ReceivedAt, s.validTill, ps)); err != nil {
			s.log.Error("time page: publish", "path", s.cfg.TimePage, "round", m.Offset.RoundID, "err", err)
		}
	}
	if s.mx != nil {
		s.mx.ObserveModel(m.Offset, m.Reference)
		s.mx.SetNodeStatus(s.cfg.Rank, string(state))
	}
	if s.srv != nil {
		s.status = modelStatus(s.status, m, state, reason, s.cfg.Deadline, s.cfg.ClockDelta)
		s.srv.Set(s.status)
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// OnRound is the master's harness.Options.OnRound: the round's figures
// for the metrics (round latency, sequence skew, retries, nodes missing),
// and the peers of the status (who did not report, whose edge was
// rejected).
func (s *nodeService) OnRound(r *rounds.RoundReport) {
	if s.mx != nil {
		s.mx.ObserveRound(r)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.srv == nil {
		return
	}
	s.peers.round(r, time.Now())
	s.setPeersLocked()
}

// OnWindow is the node's harness.Options.OnWindow, each window it closed:
// the per-edge metrics (probe pairs sent, answered, impure, lost; where
// t3 came from; the edges' fits) and the peers of the status (probes sent
// and lost, edge σ, when each answered last). It runs on the node's event
// loop and does not keep blocks or data.
func (s *nodeService) OnWindow(node world.NodeID, blocks []probelog.Block, data *syncpb.NodeWindowData) {
	if int(node) != s.cfg.Rank {
		return
	}
	if s.mx != nil {
		s.mx.ObserveWindow(node, blocks, data)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.srv == nil {
		return
	}
	s.peers.window(data)
	s.setPeersLocked()
}

// OnStats is the node's harness.Options.OnStats, after each window: its
// prober's counters and, on the real backend, the world's (timer
// lateness, datagrams dropped by reason, timestamp sources) for the
// metrics.
func (s *nodeService) OnStats(node world.NodeID, st harness.NodeStats) {
	if int(node) != s.cfg.Rank || s.mx == nil {
		return
	}
	s.mx.ObserveProbes(int(node), st.Probes)
	if st.World != nil {
		s.mx.ObserveReal(metrics.RealStatsOf(st.World))
	}
}

// setPeersLocked hands the status server the peers table; s.mu is held.
func (s *nodeService) setPeersLocked() {
	s.status.Peers = s.peers.list()
	s.srv.Set(s.status)
}

// tick writes chrony's segment after each model and every second while
// the model is valid, and marks the node stale (log, metrics) once the
// model's deadline passes without a new round.
func (s *nodeService) tick(ctx context.Context) {
	defer s.wg.Done()
	t := time.NewTicker(chronyInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.wake:
		}
		s.refresh(time.Now())
	}
}

// refresh writes one chrony sample for realtime, or marks the model stale.
func (s *nodeService) refresh(realtime time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.model == nil {
		return
	}
	local := realtime.UnixNano() + s.cfg.ClockDelta // a reading of S
	if local > s.validTill {
		if !s.stale {
			s.stale = true
			s.log.Warn("model stale: no round within its deadline; chrony's segment no longer written", "round", s.model.Offset.RoundID,
				"valid_until", time.Unix(0, s.validTill-s.cfg.ClockDelta).UTC())
			if s.mx != nil {
				s.mx.SetNodeStatus(s.cfg.Rank, string(nodestatus.StateStale))
			}
		}
		return
	}
	if s.shm == nil {
		return
	}
	sample, err := ntpshm.FromModel(s.model.Offset, local, realtime)
	if err == nil {
		err = s.shm.Write(sample)
	}
	if err != nil {
		if s.shmErrs == 0 {
			s.log.Error("chrony SHM: write", "unit", s.cfg.ChronyUnit, "round", s.model.Offset.RoundID, "err", err)
		}
		s.shmErrs++
		return
	}
	s.shmErrs = 0
}

// Close stops the services: the page's model expires at once (readers
// answer stale; the file stays, so mapped readers keep working with the
// next node), chrony's segment is detached (left in place for chronyd),
// the metrics server and the status socket stop (the socket is removed).
// It is safe to call more than once.
func (s *nodeService) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	if s.cancel != nil {
		s.cancel()
	}
	s.wg.Wait()
	var errs []error
	if s.serveErr != nil {
		errs = append(errs, <-s.serveErr)
	}
	if s.pub != nil {
		errs = append(errs, s.pub.Expire(time.Now().UnixNano()+s.cfg.ClockDelta))
	}
	if s.page != nil {
		errs = append(errs, s.page.Close())
	}
	if s.pageLock != nil {
		errs = append(errs, s.pageLock.Close())
	}
	if s.shm != nil {
		errs = append(errs, s.shm.Close())
	}
	if s.srv != nil {
		errs = append(errs, s.srv.Close())
	}
	return errors.Join(errs...)
}

// modelState is the node's state by its model: degraded when the round's
// solution is (m.Degraded) or the model's self-check fails, else ok; and
// why.
func modelState(m rounds.Model) (nodestatus.State, string) {
	var why []string
	if m.Degraded != 0 {
		why = append(why, "round degraded: "+m.Degraded.String())
	}
	if c := m.Offset.SelfCheck; c != nil && selfCheckCount(c).Fails() {
		why = append(why, fmt.Sprintf("self-check failed: %d of %d predictions within 3 sigma, worst %.1f sigma", c.Within3Sigma, c.Predictions, c.MaxSigma))
	}
	if len(why) == 0 {
		return nodestatus.StateOK, ""
	}
	return nodestatus.StateDegraded, strings.Join(why, "; ")
}

func selfCheckCount(c *offsets.SelfCheck) selfcheck.Count {
	return selfcheck.Count{Predictions: c.Predictions, Within3Sigma: c.Within3Sigma, MaxSigma: c.MaxSigma}
}

// modelStatus is base (the node's identity) with m's round: what
// `chronosync status` prints. Its offset is global time minus the node's
// clock at the end of the model's window (the opposite sign of
// offsets.Offset.OffsetNS, which is the node's clock minus global time,
// and at the window's end, not its start), its drift the rate of global
// time against the node's clock less one (−DriftPPM). Times are on
// CLOCK_REALTIME: the node's clock less delta (S − CLOCK_REALTIME).
func modelStatus(base nodestatus.Status, m rounds.Model, state nodestatus.State, reason string, deadline time.Duration, delta int64) nodestatus.Status {
	o := m.Offset
	st := base
	st.State, st.Reason = state, reason
	st.Reference = m.Reference
	end := o.WindowEndNS
	st.LastRound = nodestatus.Round{ID: o.RoundID, End: time.Unix(0, end-delta).UTC(), LatencyNS: float64(m.RoundLatency)}
	st.OffsetNS = -o.OffsetAfter(end, o.StepsBefore(end))
	st.OffsetSigmaNS = o.SigmaAt(end)
	st.DriftPPM, st.DriftSigmaPPM = -o.DriftPPM, o.DriftUncertaintyPPM
	st.SelfCheck = nodestatus.SelfCheck{}
	if c := o.SelfCheck; c != nil {
		st.SelfCheck = nodestatus.SelfCheck{Within: c.Within3Sigma, Of: c.Predictions, Pass: !selfCheckCount(c).Fails()}
	}
	st.ValidUntil = time.Unix(0, m.ReceivedAt+int64(deadline)-delta).UTC()
	// +0 for −0 (the reference node's), so that status prints no sign of
	// a difference that is none.
	st.OffsetNS, st.DriftPPM = st.OffsetNS+0, st.DriftPPM+0
	return st
}

// hostClockDelta is a cluster node's host clock S minus CLOCK_REALTIME at
// realtime, in ns, and why S is not CLOCK_REALTIME ("" when it is). A
// cluster node runs with true time on the Unix epoch (real.Config.UnixEpoch),
// where only constant offsets and steps can be injected: S is CLOCK_REALTIME
// plus them. Clock-step faults, which the fault injector applies during the
// run, are not in the delta: reason names them.
func hostClockDelta(p clockmodel.Params, stepFaults int, realtime int64) (int64, string) {
	var why []string
	delta := int64(0)
	if p.Offset != 0 || len(p.Steps) > 0 || p.PPM != 0 || p.WanderPPM != 0 || p.PeriodicPPM != 0 {
		c, err := clockmodel.New(p, nil, nil)
		if err != nil {
			why = append(why, fmt.Sprintf("injected clock model: %v", err))
		} else {
			delta = c.Ideal(realtime) - realtime
			why = append(why, fmt.Sprintf("the scenario injects a clock offset into this node (%+d ns now)", delta))
		}
	}
	if stepFaults > 0 {
		why = append(why, fmt.Sprintf("the scenario injects %d clock_step fault(s) into this node", stepFaults))
	}
	return delta, strings.Join(why, "; ")
}

// nodeServices is the configuration of the host services of rank of
// cluster c (read from file) from node's flags: the time page and the
// status socket by default (the page at timepage.Path of the scenario's
// name, the socket node<N>.sock in stateDir, the host lock's directory),
// chrony and metrics where asked for; the model's deadline; and whether
// the node's clock is CLOCK_REALTIME.
func nodeServices(cmd *cobra.Command, c *harness.Cluster, file string, rank int, stateDir string, svc hostServices, noTimePage, noStatusSock bool) (nodeServiceConfig, error) {
	log := logger(cmd)
	flags := cmd.Flags()
	if !flags.Changed("timepage") {
		svc.TimePage, svc.TimePageDefault = timepage.Path(c.Scenario.Name, rank), true
	}
	if noTimePage {
		svc.TimePage = ""
	}
	if !flags.Changed("status-socket") {
		svc.StatusSocket = filepath.Join(stateDir, fmt.Sprintf("node%d.sock", rank))
		if d := nodestatus.DefaultDir(os.Getenv, os.Geteuid()); !flags.Changed("state-dir") && filepath.Clean(d) != filepath.Clean(stateDir) {
			log.Warn("the status socket is not where chronosync status looks by default: ask with --socket", "socket", svc.StatusSocket, "status_default_dir", d)
		}
	}
	if noStatusSock {
		svc.StatusSocket = ""
	}
	if flags.Changed("chrony-shm") && (svc.ChronyUnit < 0 || svc.ChronyUnit > ntpshm.MaxUnit) {
		return nodeServiceConfig{}, fmt.Errorf("--chrony-shm %d: expected a unit 0..%d (refclock SHM UNIT in chrony.conf)", svc.ChronyUnit, ntpshm.MaxUnit)
	}
	sp := c.Scenario.Protocol.Sync
	period := max(sp.Window, sp.WindowMax) + sp.GatherDeadline
	cfg := nodeServiceConfig{
		hostServices: svc,
		Log:          log,
		Rank:         rank,
		Master:       rank == sp.Master,
		Deadline:     deadlineRounds * period,
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		abs = file
	}
	for _, a := range c.Addresses {
		cfg.Addresses = append(cfg.Addresses, a.String())
	}
	cfg.Status = nodestatus.Status{
		Node: rank, Address: c.Addresses[rank].String(), Cluster: abs, Nodes: len(c.Addresses),
		Reference: sp.Reference, PID: os.Getpid(), Started: time.Now().UTC(), State: nodestatus.StateStarting,
	}
	if sp.Reference >= 0 && sp.Reference < len(c.Addresses) {
		cfg.Status.ReferenceAddress = c.Addresses[sp.Reference].String()
	}
	resolved, err := c.Scenario.Resolve(c.Scenario.Seed)
	if err != nil {
		return nodeServiceConfig{}, fmt.Errorf("cluster %s: %w", file, err)
	}
	steps := 0
	for _, f := range resolved.Faults {
		if f.Kind == scenario.FaultClockStep && f.Node != nil && *f.Node == rank {
			steps++
		}
	}
	cfg.ClockDelta, cfg.SNotRealtime = hostClockDelta(resolved.Nodes[rank].Clock, steps, time.Now().UnixNano())
	return cfg, nil
}
