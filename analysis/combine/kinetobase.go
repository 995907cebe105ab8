package combine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/chronosync/chronosync/analysis/align"
	"github.com/chronosync/chronosync/trace/kineto"
)

// The aligned Kineto copies of one Combine share one baseTimeNanoseconds,
// as the ranks of a real multi-rank job do: HolisticTraceAnalysis (and
// anyone who lines the ranks up by hand) compares ts across ranks
// directly, without adding each file's base. Every copy's ts count from
// that base on the global timeline.
//
// The copies are written one at a time, as each rank is combined, so the
// base is chosen before the first is written, from a scan of every Kineto
// input (kineto.ScanTimes, a fraction of a decode's cost; the decode that
// follows checks the trace): each one's base and the times of its events
// other than metadata, mapped to global time as its host events will be.
// The rule:
//
//   - the smallest base of the inputs, when no event maps before it: so
//     ranks that already share one base (a real job's) keep it, and an
//     input without a base (absolute ts, base 0) keeps the others absolute;
//   - else the earliest mapped time rounded down to the whole second.
//
// A GPU event can still land before the base where the correction of the
// profiler's GPU conversion moves it earlier than the host mapping the
// scan used (that correction is 0 at the profiler's start and grows from
// there, so in practice it cannot reach a base at or below the earliest
// event). Such an event is written with a negative ts, which Chrome JSON,
// Perfetto and HTA read; it is not silent: NodeMetadata.KinetoBeforeBase
// counts them and the Logger warns.

// kinetoBase sets c.kbase from the Kineto inputs (none: nothing to do).
func (c *combiner) kinetoBase(inputs []Input) error {
	if c.o.NoKinetoOut {
		return nil
	}
	minBase, minGlobal := int64(0), int64(0)
	var haveBase, haveEvent bool
	for _, in := range inputs {
		if !IsKineto(in.Trace) {
			continue
		}
		src, err := readKinetoText(in.Trace)
		if err != nil {
			return fmt.Errorf("combine: %w", err)
		}
		t, err := kineto.ScanTimes(src)
		if err != nil {
			// Decoding the trace says what is wrong, with the byte.
			if _, derr := kineto.DecodeWith(bytes.NewReader(src), in.Trace, kineto.DecodeOptions{Keep: func(kineto.Event) bool { return false }}); derr != nil {
				return fmt.Errorf("combine: %w", derr)
			}
			return fmt.Errorf("combine: %s: %w", in.Trace, err)
		}
		if !haveBase || t.BaseTimeNs < minBase {
			minBase, haveBase = t.BaseTimeNs, true
		}
		clk, err := c.clockNode(in)
		if err != nil {
			return err
		}
		var al *align.Node
		if !c.o.NoCorrection {
			al = align.NewNode(clk, nil, c.offs)
		}
		for _, v := range t.Starts {
			g := addSat(t.BaseTimeNs, v)
			if al != nil {
				g = al.Align(g).Global
			}
			if !haveEvent || g < minGlobal {
				minGlobal, haveEvent = g, true
			}
		}
	}
	if !haveBase {
		return nil
	}
	c.kbase = minBase
	if haveEvent && minGlobal < minBase {
		c.kbase = floorSecond(minGlobal)
	}
	c.md.KinetoBaseNS = c.kbase
	return nil
}

// floorSecond rounds ns down to the whole second (toward zero where that
// would leave the int64 range).
func floorSecond(ns int64) int64 {
	q := ns / 1e9
	if ns%1e9 < 0 && ns >= -(1<<63)+1e9 {
		q--
	}
	return q * 1e9
}

// rankMembers are the top-level members the node's aligned copy gets: the
// shared base, and a distributedInfo with the rank where the input has
// none (keeping its backend and world size), as HTA needs a rank in every
// file of a job.
func (c *combiner) rankMembers(ns *nodeState) []kineto.Member {
	top := []kineto.Member{kineto.BaseMember(c.kbase)}
	if t := c.kt; t.Rank < 0 {
		v := []byte("{")
		if t.Backend != "" {
			q, _ := json.Marshal(t.Backend) // a string always marshals
			v = append(append(append(v, `"backend": `...), q...), ", "...)
		}
		v = strconv.AppendInt(append(v, `"rank": `...), int64(ns.rank), 10)
		if t.WorldSize > 0 {
			v = strconv.AppendInt(append(v, `, "world_size": `...), int64(t.WorldSize), 10)
		}
		top = append(top, kineto.Member{Key: "distributedInfo", Value: append(v, '}')})
	}
	return top
}

// addSat is a + b, saturating at the ends of the int64 range.
func addSat(a, b int64) int64 {
	s := a + b
	switch {
	case a > 0 && b > 0 && s < 0:
		return math.MaxInt64
	case a < 0 && b < 0 && s >= 0:
		return math.MinInt64
	}
	return s
}
