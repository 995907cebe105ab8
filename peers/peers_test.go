package peers

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/chronosync/chronosync/ci/busy"
)

const (
	runFor = 20 * time.Second // each daemon pair's run
	// maxRun bounds a run that goes on past runFor for want of samples. On
	// a busy machine chrony updates its clock, which is what it logs, less
	// often: in basic mode, beside two CPU hogs on 2 CPUs, 28 to 183
	// updates in the 16 s after the warm-up. Three times runFor gives the
	// slowest of those about the 100 samples; where even that is too few,
	// the test measures the machine and may say it is too busy.
	maxRun = 3 * runFor
	warmUp = 4 * time.Second // samples before this, counted from start, are not judged
	// maxMedian bounds the median |offset|. On a veth pair here chrony's is
	// a few µs in basic mode and below one in interleaved mode, ptp4l's
	// below one.
	maxMedian = 100e3 // ns
)

// TestPeers runs each reference daemon pair for runFor on a fresh veth
// link (longer, up to maxRun, until it has its samples), then checks that
// the client or slave reported offsets, none malformed, with a median
// |offset| below maxMedian, and logs the percentiles of |offset|. Too few
// samples while the machine's CPUs were busy nearly all the time skip the
// test as too busy (ci/busy) instead of failing it.
func TestPeers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs daemons for a minute; skipped with -short")
	}
	needDaemons(t)
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
			meter := busy.Start()
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
			for err == nil && len(absOffsets(samples, start.Add(warmUp))) < tc.minSamples && time.Since(start) < maxRun {
				time.Sleep(time.Second)
				samples, malformed, err = client.Samples()
			}
			ran := time.Since(start)
			stop()
			if err != nil {
				t.Fatal(err)
			}
			if malformed > 0 {
				t.Errorf("%d malformed report lines", malformed)
			}
			abs := absOffsets(samples, start.Add(warmUp))
			if len(abs) < tc.minSamples {
				meter.SkipIfBusy(t, fmt.Sprintf("%s reported %d samples in the %v after the warm-up, want %d",
					tc.name, len(abs), (ran-warmUp).Round(time.Second), tc.minSamples))
				t.Fatalf("%d samples after the warm-up (%d in all, %v run), want at least %d", len(abs), len(samples), ran.Round(time.Second), tc.minSamples)
			}
			p50, p95, p99 := percentile(abs, 0.50), percentile(abs, 0.95), percentile(abs, 0.99)
			t.Logf("%s: %d samples in %v, |offset| p50 %.3f µs, p95 %.3f µs, p99 %.3f µs; the machine: %s",
				tc.name, len(abs), ran.Round(time.Second), p50/1e3, p95/1e3, p99/1e3, meter.Reading())
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
