package phasegap

import (
	"fmt"

	"github.com/chronosync/chronosync/phasegap/report"
)

// Gathered is what rank 0 holds once every rank sent it its summary and
// the last iterations it measured: enough for results.csv, the manifest
// and trace.json.
type Gathered struct {
	Summaries []report.RankSummary
	// Ranks hold each rank's last traced iterations (nil when none were
	// asked for).
	Ranks []report.Rank
}

// sampleFields is how many float64s one sample takes in the gather,
// before its threads' spans (two each).
const sampleFields = 17

// Gather sends every rank's summary and its last traceIters samples (0:
// none) to rank 0, which returns them; the other ranks return nil. Every
// rank must call it.
func Gather(c Comm, res *Result, traceIters int) (*Gathered, error) {
	sum := report.Summarize(res.Rank).Vector()
	size := c.Size()
	var all []float64
	if c.Rank() == 0 {
		all = make([]float64, size*len(sum))
	}
	if err := c.Gather(sum, all); err != nil {
		return nil, fmt.Errorf("gather the summaries: %w", err)
	}
	var g *Gathered
	if c.Rank() == 0 {
		g = &Gathered{}
		for r := range size {
			s, err := report.SummaryFromVector(all[r*len(sum) : (r+1)*len(sum)])
			if err != nil {
				return nil, fmt.Errorf("rank %d's summary: %w", r, err)
			}
			g.Summaries = append(g.Summaries, s)
		}
	}
	if traceIters <= 0 {
		return g, nil
	}
	samples := res.Rank.Samples[len(res.Rank.Samples)-min(traceIters, len(res.Rank.Samples)):]
	threads := len(samples[0].Threads)
	per := sampleFields + 2*threads
	send := make([]float64, 0, len(samples)*per)
	for _, s := range samples {
		send = append(send, float64(s.Iter), float64(s.Start), float64(s.Post), float64(s.Interior), float64(s.Wait),
			float64(s.Boundary), float64(s.Poll), float64(s.CommWindow), float64(s.Total), float64(s.CommStart),
			float64(s.CommEnd), float64(s.InteriorStart), float64(s.WaitStart), float64(s.BoundaryStart),
			float64(s.TestCalls), float64(s.WaitCalls), float64(s.PollsToComplete))
		for _, t := range s.Threads {
			send = append(send, float64(t.Start), float64(t.End))
		}
	}
	if c.Rank() == 0 {
		all = make([]float64, size*len(send))
	}
	if err := c.Gather(send, all); err != nil {
		return nil, fmt.Errorf("gather the traced iterations: %w", err)
	}
	if g == nil {
		return nil, nil
	}
	for r := range size {
		rk := report.Rank{Rank: r}
		for i := range samples {
			v := all[r*len(send)+i*per:]
			s := report.Sample{
				Iter: int(v[0]), Start: int64(v[1]), Post: int64(v[2]), Interior: int64(v[3]), Wait: int64(v[4]),
				Boundary: int64(v[5]), Poll: int64(v[6]), CommWindow: int64(v[7]), Total: int64(v[8]), CommStart: int64(v[9]),
				CommEnd: int64(v[10]), InteriorStart: int64(v[11]), WaitStart: int64(v[12]), BoundaryStart: int64(v[13]),
				TestCalls: int(v[14]), WaitCalls: int(v[15]), PollsToComplete: int(v[16]),
			}
			for t := range threads {
				s.Threads = append(s.Threads, report.Span{Start: int64(v[sampleFields+2*t]), End: int64(v[sampleFields+2*t+1])})
			}
			rk.Samples = append(rk.Samples, s)
		}
		g.Ranks = append(g.Ranks, rk)
	}
	return g, nil
}
