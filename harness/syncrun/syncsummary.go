package syncrun

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/chronosync/chronosync/analysis/groundtruth"
	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/analysis/selfcheck"
	"github.com/chronosync/chronosync/analysis/stats"
	"github.com/chronosync/chronosync/estimate"
	"github.com/chronosync/chronosync/harness/engine"
	"github.com/chronosync/chronosync/probe/probelog"
	"github.com/chronosync/chronosync/rounds"
	"github.com/chronosync/chronosync/rounds/syncpb"
)

// SyncSummary is the outcome of a sync run.
type SyncSummary struct {
	Mode      string `json:"mode"`
	Estimator string `json:"estimator"`
	Reference int    `json:"reference_node"`
	// Rounds counts the rounds the master completed (in consensus mode,
	// the windows of the reference node).
	Rounds int `json:"rounds"`
	// WindowsClosed counts the windows this process's nodes closed, each
	// a node's part of one round: on a cluster node that is not the
	// master, the rounds it took part in.
	WindowsClosed int    `json:"windows_closed"`
	ConvergedFrom uint64 `json:"converged_from_round"`
	// Online is the accuracy of offsets.jsonl, what the run exported.
	Online groundtruth.Accuracy `json:"online"`
	// Calibration is whether offsets.jsonl's uncertainties contain its
	// errors against the ground truth, from ConvergedFrom on; nil
	// without truth (a cluster node that closed no window).
	Calibration *groundtruth.Calibration `json:"calibration,omitempty"`
	// SelfCheck is whether each round's models predicted the next
	// window's edges within their σ, from the models of ConvergedFrom on:
	// the same question without ground truth; nil without predictions
	// (consensus mode, a single round).
	SelfCheck *selfcheck.Summary `json:"self_check,omitempty"`
	// Estimators is the accuracy of every estimator re-run with GraphCalc
	// on the same recorded probe stream (as `chronosync estimate` does).
	Estimators map[string]groundtruth.Accuracy `json:"estimators"`
	Control    ControlSummary                  `json:"control"`
	// Steps are the clock steps offsets.jsonl records, in round and node
	// order (not the doubt a step too few nodes can attribute leaves on
	// the reference, which the round's warning says).
	Steps []StepSeen `json:"steps,omitempty"`
	// Unsolved lists the rounds in which nodes of the probe graph got no
	// clock model, each with why and the scheduled faults that explain
	// it.
	Unsolved []UnsolvedRound `json:"unsolved,omitempty"`
	Probes   ProbeSummary    `json:"probes"`
}

// StepSeen is a clock step offsets.jsonl records: the node that stepped,
// in which round, by how much and when (its clock's reading before the
// step).
type StepSeen struct {
	Round uint64 `json:"round_id"`
	Node  int    `json:"node_id"`
	offsets.Step
}

// ControlSummary are the rounds' control-plane figures, in ns on the
// master's clock.
type ControlSummary struct {
	EndToStart   stats.Summary `json:"end_to_start_ns"`
	GatherWait   stats.Summary `json:"gather_wait_ns"`
	SequenceSkew stats.Summary `json:"sequence_skew_ns"`
	MessageBytes stats.Summary `json:"message_bytes"`
	Retries      int           `json:"retries"`
	// Missing lists, per round with absentees, the nodes that did not
	// report.
	Missing map[string][]int `json:"missing,omitempty"`
	// Errors lists, per round, why it was unsolved or only partly solved.
	Errors map[string]string `json:"errors,omitempty"`
	// Refused counts, over the run, what the master's door refused
	// ("report FIELD": a report whole, the node missing from the round;
	// "edge FIELD": one edge of a report) and the records left out of the
	// run files ("record FIELD" by the master, "recorded FIELD" by the
	// recorder), by reason; the rounds' warnings say which.
	Refused map[string]int `json:"refused,omitempty"`
	// Warnings lists, per round whose loops did not close within their
	// uncertainty (GraphCalc inflated its uncertainties to cover it) or
	// whose solution could not settle something (a clock step no node
	// count can attribute), what it says.
	Warnings map[string]string `json:"warnings,omitempty"`
}

// ProbeSummary adds up the probe stream.
type ProbeSummary struct {
	Blocks    int `json:"edge_windows"`
	PairsSent int `json:"pairs_sent"`
	Answered  int `json:"probes_answered"`
	Lost      int `json:"probes_lost"`
	// Malformed counts datagrams on the probe port that were not probes
	// (wrong size, magic or version): dropped, counted, never fatal.
	Malformed int `json:"malformed,omitempty"`
	// Rejected counts the probe datagrams the probers dropped as hostile
	// or corrupt, by reason (probe.Stats): replies from another address
	// than the one probed ("spoofed"), timestamps that cannot be
	// ("implausible"), adverts out of bounds ("advert"), node ids out of
	// range ("bad_node"); and, counted though not all dropped, second
	// replies to a probe already matched ("duplicate", dropped) and
	// requests answered already ("replayed", answered again): a
	// duplicated or a replayed datagram, which an unkeyed cluster cannot
	// tell apart (a keyed one drops replays as auth_replayed first).
	Rejected map[string]int `json:"rejected,omitempty"`
	// T3Kernel and T3User count the answered probes by where their t3
	// came from (probes.bin): the reply's transmit timestamp as the world
	// returned it (the kernel's on the real backend), carried back by the
	// responder's next reply, or the responder's user-space reading
	// before it sent the reply (each window's last probe per edge, lost
	// follow-ups, transmit timestamps that came too late).
	T3Kernel int `json:"t3_kernel"`
	T3User   int `json:"t3_user"`
}

// consensusSelfCheck is the self-check of a consensus run (which has no
// Solver to run it as the rounds go): every node's correction of one
// window predicts the edges of the next, as rounds.SelfCheck does for a
// Solver's models (without the wander allowance, which only a Solver
// measures). It returns the records with their SelfCheck set.
func (p *syncProtocol) consensusSelfCheck() []offsets.Offset {
	byRound := map[uint64][]offsets.Offset{}
	for _, o := range p.online {
		byRound[o.RoundID] = append(byRound[o.RoundID], o)
	}
	reports := map[uint64][]*syncpb.NodeWindowData{}
	for _, d := range p.reportsSeen {
		reports[d.RoundId] = append(reports[d.RoundId], d)
	}
	none := func(offsets.Offset, int64) (float64, bool) { return 0, true }
	var out []offsets.Offset
	for _, r := range slices.Sorted(maps.Keys(byRound)) {
		prev := map[int]offsets.Offset{}
		for _, o := range byRound[r-1] {
			prev[o.NodeID] = o
		}
		checks := rounds.SelfCheck(r, prev, reports[r], byRound[r], nil, none)
		for _, o := range byRound[r] {
			o.SelfCheck = checks[o.NodeID]
			out = append(out, o)
		}
	}
	return out
}

// Summarize puts the run's figures in the summary's sync section.
func (p *syncProtocol) Summarize(s engine.Sections) {
	out := &SyncSummary{
		Mode: string(p.cfg.Mode), Estimator: string(p.cfg.Estimate.Kind), Reference: int(p.cfg.Reference),
		ConvergedFrom: uint64(p.sc.Protocol.Sync.ConvergedFrom),
		Estimators:    map[string]groundtruth.Accuracy{},
	}
	out.Online = groundtruth.Evaluate(p.online, p.windows, int(p.cfg.Reference), out.ConvergedFrom)
	if len(p.windows) > 0 {
		c := groundtruth.Calibrate(p.online, p.windows, int(p.cfg.Reference), out.ConvergedFrom)
		out.Calibration = &c
	}
	for _, o := range p.online {
		for _, st := range o.Steps {
			if st.SizeNS != 0 {
				out.Steps = append(out.Steps, StepSeen{Round: o.RoundID, Node: o.NodeID, Step: st})
			}
		}
	}
	checked := p.online
	if p.cfg.Mode == rounds.ModeConsensus {
		checked = p.consensusSelfCheck()
	}
	if sc := selfcheck.Summarize(checked, out.ConvergedFrom+1); sc.Predictions > 0 {
		out.SelfCheck = &sc
	}
	var ends, waits, skews, sizes []float64
	for _, r := range slices.Concat(p.reports, p.leftOut) {
		for why, n := range r.refused {
			if out.Control.Refused == nil {
				out.Control.Refused = map[string]int{}
			}
			out.Control.Refused[why] += n
		}
	}
	for _, r := range p.leftOut { // consensus records: no round of a master's
		if out.Control.Warnings == nil {
			out.Control.Warnings = map[string]string{}
		}
		out.Control.Warnings[fmt.Sprint(r.round)] = strings.Join(slices.DeleteFunc([]string{out.Control.Warnings[fmt.Sprint(r.round)], r.warning}, func(w string) bool { return w == "" }), "; ")
	}
	for _, r := range p.reports {
		ends = append(ends, float64(r.figures.EndToStart))
		waits = append(waits, float64(r.figures.GatherWait))
		skews = append(skews, float64(r.figures.SequenceSkew))
		sizes = append(sizes, float64(r.figures.MessageBytes))
		out.Control.Retries += r.figures.Retries
		key := fmt.Sprint(r.round)
		if len(r.missing) > 0 {
			if out.Control.Missing == nil {
				out.Control.Missing = map[string][]int{}
			}
			out.Control.Missing[key] = r.missing
		}
		if r.err != "" {
			if out.Control.Errors == nil {
				out.Control.Errors = map[string]string{}
			}
			out.Control.Errors[key] = r.err
		}
		if r.warning != "" {
			if out.Control.Warnings == nil {
				out.Control.Warnings = map[string]string{}
			}
			out.Control.Warnings[key] = r.warning
		}
	}
	out.Unsolved = p.unsolved
	out.Rounds = len(p.reports)
	out.WindowsClosed = len(p.windows)
	if p.cfg.Mode == rounds.ModeConsensus {
		for _, w := range p.windows {
			if w.Node == int(p.cfg.Reference) {
				out.Rounds++
			}
		}
	}
	out.Control.EndToStart, out.Control.GatherWait = stats.Summarize(ends), stats.Summarize(waits)
	out.Control.SequenceSkew, out.Control.MessageBytes = stats.Summarize(skews), stats.Summarize(sizes)
	// probes.bin is read window by window: counted, and every estimator
	// re-run on it, without holding it whole.
	count := func(b *probelog.Block) {
		out.Probes.Blocks++
		out.Probes.PairsSent += b.SentPairs
		out.Probes.Answered += len(b.Probes)
		out.Probes.Lost += b.Lost
		kernel, user, _ := b.T3Sources()
		out.Probes.T3Kernel += kernel
		out.Probes.T3User += user
	}
	reports, _, err := streamReports(filepath.Join(p.dir, FileProbes), p.cfg.Estimate, estimate.Kinds(), nil, count)
	if err != nil {
		p.fail(err)
	}
	addProbes(&out.Probes, p.rotatedProbes) // a run until stopped's rotated probes.N.bin
	for _, n := range p.nodes {
		if pr := n.Prober(); pr != nil {
			st := pr.Stats()
			out.Probes.Malformed += st.Malformed
			for why, n := range map[string]int{"spoofed": st.Spoofed, "implausible": st.Implausible, "advert": st.AdvertsRejected, "bad_node": st.BadNode,
				"duplicate": st.Duplicate, "replayed": st.Replayed} {
				if n > 0 {
					if out.Probes.Rejected == nil {
						out.Probes.Rejected = map[string]int{}
					}
					out.Probes.Rejected[why] += n
				}
			}
		}
	}
	for _, r := range solveAll(reports, p.cfg, estimate.Kinds(), p.windows, out.ConvergedFrom) {
		if r.Accuracy != nil { // nil without truth: a cluster node that closed no window
			out.Estimators[r.Estimator] = *r.Accuracy
		}
		p.graphcalc = append(p.graphcalc, r)
	}
	s.Put(out)
}
