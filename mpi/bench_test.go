//go:build mpi

package mpi

import (
	"flag"
	"strings"
	"testing"
)

// BenchmarkRingExchange times one halo exchange on the ring: Irecv from
// both neighbours, Isend to both, Waitall. Each rank's benchmark loop must
// run as many exchanges as the others', but testing picks b.N from each
// rank's own timings; so it runs only with a fixed count, which gives every
// rank the same b.N:
//
//	go test -tags mpi -run '^$' -bench RingExchange -benchtime 100000x ./mpi/
func BenchmarkRingExchange(b *testing.B) {
	if f := flag.Lookup("test.benchtime"); f == nil || !strings.HasSuffix(f.Value.String(), "x") {
		b.Skip("the ranks must run the same number of exchanges: run with -benchtime Nx, such as -benchtime 100000x")
	}
	for _, size := range []struct {
		name string
		n    int // float64s per halo
	}{{"8B", 1}, {"8KiB", 1024}, {"512KiB", 64 * 1024}} {
		b.Run(size.name, func(b *testing.B) {
			r := newRing(b, size.n)
			r.fill(0)
			if err := r.comm.Barrier(); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if err := r.nonblocking(); err != nil {
					b.Fatal(err)
				}
				if err := r.reqs.Waitall(); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/exchange")
		})
	}
}
