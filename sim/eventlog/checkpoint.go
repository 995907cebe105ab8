package eventlog

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Summary is what a run records of its event log: the count, the final
// hash and the checkpoints, enough for a replay to locate a divergence to
// within CheckpointEvery events without keeping every line.
type Summary struct {
	Count       uint64
	Hash        uint64
	Checkpoints []uint64
}

// Summary returns the log's summary so far.
func (l *Log) Summary() Summary {
	return Summary{Count: l.count, Hash: l.hash, Checkpoints: append([]uint64(nil), l.ckpt...)}
}

const ckptHeader = "chronosync-event-checkpoints v1"

// WriteTo writes the summary in its text form: a header line, then one
// hexadecimal hash per checkpoint.
func (s Summary) WriteTo(w io.Writer) (int64, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s count=%d hash=%016x every=%d\n", ckptHeader, s.Count, s.Hash, CheckpointEvery)
	for _, h := range s.Checkpoints {
		fmt.Fprintf(&b, "%016x\n", h)
	}
	n, err := io.WriteString(w, b.String())
	return int64(n), err
}

// ReadSummary parses what Summary.WriteTo wrote. name is used in errors.
func ReadSummary(name string, r io.Reader) (Summary, error) {
	var s Summary
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if line == 1 {
			var every int
			if _, err := fmt.Sscanf(text, ckptHeader+" count=%d hash=%x every=%d", &s.Count, &s.Hash, &every); err != nil {
				return s, fmt.Errorf("%s:1: bad header %q: %w", name, text, err)
			}
			if every != CheckpointEvery {
				return s, fmt.Errorf("%s:1: checkpoints every %d events, this build uses %d", name, every, CheckpointEvery)
			}
			continue
		}
		h, err := strconv.ParseUint(text, 16, 64)
		if err != nil {
			return s, fmt.Errorf("%s:%d: bad checkpoint %q: expected 16 hex digits", name, line, text)
		}
		s.Checkpoints = append(s.Checkpoints, h)
	}
	if err := sc.Err(); err != nil {
		return s, fmt.Errorf("read %s: %w", name, err)
	}
	if line == 0 {
		return s, fmt.Errorf("%s: empty checkpoint file", name)
	}
	if want := s.Count / CheckpointEvery; uint64(len(s.Checkpoints)) != want {
		return s, fmt.Errorf("%s: %d checkpoints for %d events, want %d", name, len(s.Checkpoints), s.Count, want)
	}
	return s, nil
}

// Divergence locates where two event logs first differ: the first event
// that differs lies in (After, Upto]. Upto is 0 when the logs are equal.
type Divergence struct {
	After, Upto uint64
}

// Diverge compares a recorded summary with a replayed one.
func Diverge(want, got Summary) Divergence {
	if want.Hash == got.Hash && want.Count == got.Count {
		return Divergence{}
	}
	n := min(len(want.Checkpoints), len(got.Checkpoints))
	for i := range n {
		if want.Checkpoints[i] != got.Checkpoints[i] {
			return Divergence{After: uint64(i) * CheckpointEvery, Upto: uint64(i+1) * CheckpointEvery}
		}
	}
	return Divergence{After: uint64(n) * CheckpointEvery, Upto: max(want.Count, got.Count)}
}
