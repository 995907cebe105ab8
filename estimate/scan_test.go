package estimate

import (
	"fmt"
	"testing"

	"github.com/chronosync/chronosync/analysis/stats"
)

// TestMedian16 holds median16, the walk's fast median, to stats.Median.
func TestMedian16(t *testing.T) {
	for n := 1; n <= stepWindow; n++ {
		v := make([]float64, n)
		for i := range v {
			v[i] = float64((i*7919 + n*31) % 23)
		}
		want := stats.Median(append([]float64(nil), v...))
		if got := median16(v); got != want {
			t.Errorf("%d values %v: median16 %v, want %v", n, v, got, want)
		}
	}
	if m := median3(3, 1, 2); m != 2 {
		t.Errorf("median3(3, 1, 2) = %v", m)
	}
}

// ExampleScanSrcSteps: a node's clock steps back 400 ns, too little for
// any one of its six out-edges to tell from their 30 µs jitter, but all
// six together find it, and every edge is cut there.
func ExampleScanSrcSteps() {
	var ws []*Window
	for e := range uint64(6) {
		c := normalCfg(2500, 50+e)
		c.srcStart = 1e12
		c.stepAt, c.stepSrc = 1.1e9, -400
		w, _ := NewWindow(generate(c), Options{Origin: 1e12 + 1e9})
		ws = append(ws, w)
	}
	cuts, miss := ScanSrcSteps(ws)
	alone, _ := ws[0].Fit(SVM)
	for _, w := range ws {
		w.SetSrcSteps(cuts)
	}
	cut, _ := ws[0].Fit(SVM)
	fmt.Printf("one edge alone: %d steps; six together: %d step, between %.2f s and %.2f s; an edge cut there: %d step\n",
		len(alone.Steps), len(cuts), float64(cuts[0].From-1e12)/1e9, float64(cuts[0].To-1e12)/1e9, len(cut.Steps))
	fmt.Printf("a step of src too small to find leaves about %.0f ns\n", miss)
	// Output:
	// one edge alone: 0 steps; six together: 1 step, between 1.10 s and 1.16 s; an edge cut there: 1 step
	// a step of src too small to find leaves about 55 ns
}
