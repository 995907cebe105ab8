// Package rounds runs the sync protocol on each node: probing windows,
// per-edge fits, and the rounds that carry them to a master which solves one
// global clock model with GraphCalc. Three modes share the probe and fit
// code:
//
//   - [ModeRounds] (Variant B, the default): the master ends each round with
//     ROUND_END, nodes stop probing, fit their edges and send NodeWindowData
//     over a persistent stream; the master gathers until every connected
//     participant has reported or the gather deadline passes, solves, and
//     starts the next round with ROUND_START(seq).
//   - [ModeWindows] (Variant A): after the first ROUND_START each node rotates
//     its window by its own clock and sends NodeWindowData without waiting;
//     the master gathers per round_id.
//   - [ModeConsensus]: no master; each node corrects its own clock model with
//     a weighted step towards its peers' advertised models (Firefly).
//
// It is protocol code: it acts only through its [world.Env] and reports to an
// [Observer]; it never does I/O of its own.
package rounds

import (
	"fmt"
	"time"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/estimate"
	"github.com/chronosync/chronosync/graphcalc"
	"github.com/chronosync/chronosync/probe/probelog"
	"github.com/chronosync/chronosync/rounds/syncpb"
	"github.com/chronosync/chronosync/world"
)

// Port is the stream port the master listens on.
const Port uint16 = 7101

// Mode selects how windows and rounds are driven.
type Mode string

// The modes.
const (
	ModeRounds    Mode = "rounds"
	ModeWindows   Mode = "windows"
	ModeConsensus Mode = "consensus"
)

// Config is the protocol's configuration, the same on every node.
type Config struct {
	Mode     Mode
	Estimate estimate.Options // Kind and the selection options; Origin is set per window
	Cadence  time.Duration    // pair interval per edge
	Window   time.Duration    // initial window length
	// WindowMin and WindowMax bound the adaptive window; both zero keep
	// the window fixed.
	WindowMin, WindowMax time.Duration
	Rounds               int // rounds to run; 0 runs until the world stops
	Master, Reference    world.NodeID
	// Nodes are every node of the probe graph and Participants those with
	// out-edges, which probe and join the gather; both sorted.
	Nodes, Participants []world.NodeID
	GatherDeadline      time.Duration
	Heartbeat           time.Duration
	ConsensusGain       float64
	MaxFrame            int // wire frame cap; 0 means the codec's default
	GraphCalc           graphcalc.Options

	// LastRound is the last round id a previous incarnation of the master
	// completed (0: none): the master numbers its rounds from LastRound+1,
	// so that a master restarted on its run files continues them without
	// repeating a round id; in consensus mode each node numbers its own
	// windows from it. Rounds counts from LastRound too.
	LastRound uint64
}

// Validate reports the first problem with c.
func (c *Config) Validate() error {
	switch c.Mode {
	case ModeRounds, ModeWindows, ModeConsensus:
	default:
		return fmt.Errorf("rounds: unknown mode %q (want rounds, windows or consensus)", c.Mode)
	}
	if _, err := estimate.ParseKind(string(c.Estimate.Kind)); err != nil {
		return fmt.Errorf("rounds: %w", err)
	}
	switch {
	case c.Cadence <= 0, c.Window <= 0, c.GatherDeadline <= 0, c.Heartbeat <= 0:
		return fmt.Errorf("rounds: cadence, window, gather deadline and heartbeat must be > 0")
	case (c.WindowMin != 0 || c.WindowMax != 0) && !(0 < c.WindowMin && c.WindowMin <= c.Window && c.Window <= c.WindowMax):
		return fmt.Errorf("rounds: adaptive window needs 0 < min %v <= window %v <= max %v", c.WindowMin, c.Window, c.WindowMax)
	case max(c.Window, c.WindowMax) > MaxWindow:
		// The run files refuse a longer window (offsets.MaxWindowNS), and
		// so does the master's door.
		return fmt.Errorf("rounds: window %v is longer than the protocol's longest, %v (rounds.MaxWindow)", max(c.Window, c.WindowMax), MaxWindow)
	case c.Mode == ModeConsensus && !(c.ConsensusGain > 0 && c.ConsensusGain <= 1):
		return fmt.Errorf("rounds: consensus gain %v must be in (0, 1]", c.ConsensusGain)
	case len(c.Participants) == 0:
		return fmt.Errorf("rounds: no participants (no node has an out-edge)")
	}
	return nil
}

// Observer receives what the protocol produces, on the event loop of the
// node that produced it. Implementations record it (files, metrics); they
// must not call back into the protocol.
type Observer interface {
	// Window runs on a node when it closes a window, with the probe stream
	// of each out-edge and the fits it reports.
	Window(node world.NodeID, blocks []probelog.Block, data *syncpb.NodeWindowData)
	// Round runs on the master when a round is gathered and solved.
	Round(r *RoundReport)
	// Consensus runs on a node in consensus mode after each update, with
	// its new clock model.
	Consensus(node world.NodeID, rec offsets.Offset)
}

// RoundReport is the master's view of one round.
type RoundReport struct {
	Round, Window, Sequence uint64
	Nodes                   []*syncpb.NodeWindowData // reported, by node ID
	Missing                 []int                    // participants that did not report
	Summary                 *graphcalc.RoundSummary  // nil when the round could not be solved
	Offsets                 []offsets.Offset
	Edges                   []offsets.Edge
	Err                     error    // why the round is unsolved or partial (e.g. *graphcalc.DisconnectedError)
	Notes                   []string // what the solution could not settle (rounds.Solver.Notes)
	// Refused counts what the master's door refused since the last round
	// (reports whole, "report FIELD"; edges, "edge FIELD") and the records
	// the solution left out ("record FIELD"), by reason; nil when nothing.
	Refused map[string]int
	Figures Figures
}

// Figures are a round's control-plane measurements, on the master's clock.
type Figures struct {
	Window       time.Duration // the window length this round ran with
	GatherWait   time.Duration // ROUND_END to the last report (or the deadline)
	EndToStart   time.Duration // ROUND_END to the next ROUND_START
	SequenceSkew time.Duration // spread of the nodes' window starts on the global timeline
	Retries      int           // reconnections since the previous round
	MessageBytes int           // bytes of NodeWindowData frames gathered
	// ResultBytes are the bytes of the RoundResult frames the master sent
	// after solving the round (the master's own node's, handed over
	// directly, not counted).
	ResultBytes int
}

// NopObserver ignores everything.
type NopObserver struct{}

// Window implements [Observer].
func (NopObserver) Window(world.NodeID, []probelog.Block, *syncpb.NodeWindowData) {}

// Round implements [Observer].
func (NopObserver) Round(*RoundReport) {}

// Consensus implements [Observer].
func (NopObserver) Consensus(world.NodeID, offsets.Offset) {}
