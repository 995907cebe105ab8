//go:build linux && (amd64 || arm64 || ppc64 || ppc64le || riscv64 || s390x || loong64 || mips64 || mips64le)

package ntpshm

import (
	"testing"
	"time"

	"github.com/chronosync/chronosync/analysis/offsets"
)

// BenchmarkWrite is one mode-1 Write to an attached segment.
func BenchmarkWrite(b *testing.B) {
	s := newTestSegment(b)
	now := time.Unix(1_764_000_000, 0)
	sample := Sample{ClockTime: now.Add(250 * time.Microsecond), ReceiveTime: now, Precision: -20}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Write(sample); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFromModelWrite is what a node does per sample: read the clock,
// evaluate the model (with a step in the window), write.
func BenchmarkFromModelWrite(b *testing.B) {
	s := newTestSegment(b)
	start := time.Now().UnixNano()
	model := offsets.Offset{WindowStartNS: start, WindowEndNS: start + 1e9, OffsetNS: -250_000, DriftPPM: 1.5,
		UncertaintyNS: 100, DriftUncertaintyPPM: 0.01, Steps: []offsets.Step{{AtNS: start + 1, SizeNS: 1000, SizeUncertaintyNS: 10}}}
	b.ReportAllocs()
	for b.Loop() {
		now := time.Now()
		sample, err := FromModel(model, now.UnixNano(), now)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Write(sample); err != nil {
			b.Fatal(err)
		}
	}
}
