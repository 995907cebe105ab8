package peers

import (
	"math"
	"slices"
	"testing"
	"time"
)

const (
	runFor = 20 * time.Second // each daemon pair's run
	warmUp = 4 * time.Second  // samples before this, counted from start, are not judged
	// maxMedian bounds the median |offset|. On a veth pair here chrony's is
	// a few µs in basic mode and below one in interleaved mode, ptp4l's
	// below one.
	maxMedian = 100e3 // ns
)

// TestPeers runs each reference daemon pair for runFor on a fresh veth
// link, then checks that the client or slave reported offsets, none
// malformed, with a median |offset| below maxMedian, and logs the
// percentiles of |offset|.
func TestPeers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs daemons for a minute; skipped with -short")
	}
	needDaemons(t, "chronyd", "ptp4l")
	sweepStale(t)
	for _, tc := range []struct {
		name       string
		minSamples int
		start      func(*testing.T, veth) (Daemon, Daemon, error)
	}{
		{"chrony-basic", 100, chrony(false)},
		{"chrony-xleave", 100, chrony(true)},
		{"ptp4l", 10, func(t *testing.T, v veth) (Daemon, Daemon, error) {
			return StartPTP(PTPConfig{
				MasterNS: v.nsA, MasterIface: v.ifA, SlaveNS: v.nsB, SlaveIface: v.ifB,
				LogSyncInterval: -4, Dir: t.TempDir(),
			})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := newVeth(t)
			start := time.Now()
			server, client, err := tc.start(t, v)
			if err != nil {
				t.Fatal(err)
			}
			stopped := false
			stop := func() {
				if stopped {
					return
				}
				stopped = true
				for _, d := range []Daemon{client, server} {
					if err := d.Stop(); err != nil {
						t.Error(err)
					}
				}
			}
			t.Cleanup(stop)
			time.Sleep(runFor)
			samples, malformed, err := client.Samples()
			stop()
			if err != nil {
				t.Fatal(err)
			}
			if malformed > 0 {
				t.Errorf("%d malformed report lines", malformed)
			}
			abs := absOffsets(samples, start.Add(warmUp))
			if len(abs) < tc.minSamples {
				t.Fatalf("%d samples after the warm-up (%d in all), want at least %d", len(abs), len(samples), tc.minSamples)
			}
			p50, p95, p99 := percentile(abs, 0.50), percentile(abs, 0.95), percentile(abs, 0.99)
			t.Logf("%s: %d samples, |offset| p50 %.3f µs, p95 %.3f µs, p99 %.3f µs",
				tc.name, len(abs), p50/1e3, p95/1e3, p99/1e3)
			if p50 > maxMedian {
				t.Errorf("median |offset| %.0f ns > %.0f ns", p50, float64(maxMedian))
			}
		})
	}
}

// chrony starts a chrony pair over v polling every 1/16 s.
func chrony(xleave bool) func(*testing.T, veth) (Daemon, Daemon, error) {
	return func(t *testing.T, v veth) (Daemon, Daemon, error) {
		return StartChrony(ChronyConfig{
			ServerNS: v.nsA, ServerAddr: v.addrA, ClientNS: v.nsB,
			Poll: -4, XLeave: xleave, Dir: t.TempDir(),
		})
	}
}

// absOffsets returns the sorted |offset| of the samples at or after from.
// chrony's sample times have whole seconds, so from is truncated to one.
func absOffsets(samples []Sample, from time.Time) []float64 {
	from = from.Truncate(time.Second)
	var abs []float64
	for _, s := range samples {
		if !s.At.Before(from) {
			abs = append(abs, math.Abs(s.OffsetNS))
		}
	}
	slices.Sort(abs)
	return abs
}

// percentile returns the q-quantile of sorted (nearest rank).
func percentile(sorted []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(i, 0)]
}
