package harness

import (
	"io"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// progress shows how far a run has come in virtual time. A nil writer
// gives a progress that shows nothing.
type progress struct {
	p     *mpb.Progress
	bar   *mpb.Bar
	total time.Duration
}

func newProgress(w io.Writer, name string, total time.Duration) *progress {
	if w == nil || total <= 0 {
		return &progress{}
	}
	p := mpb.New(mpb.WithOutput(w), mpb.WithWidth(40), mpb.WithAutoRefresh())
	bar := p.AddBar(int64(total/time.Millisecond),
		mpb.PrependDecorators(decor.Name(name+" ", decor.WC{C: decor.DindentRight}), decor.Percentage()),
		mpb.AppendDecorators(decor.Elapsed(decor.ET_STYLE_GO), decor.Name(" wall")),
	)
	return &progress{p: p, bar: bar, total: total}
}

func (p *progress) set(now time.Duration) {
	if p.bar == nil {
		return
	}
	// A real run's clock overshoots its duration; a bar past its total
	// completes early and never redraws.
	p.bar.SetCurrent(int64(min(now, p.total) / time.Millisecond))
}

func (p *progress) done() {
	if p.bar == nil {
		return
	}
	// A real run ends a little short of its total, an interrupted one far
	// short; SetTotal cannot complete a bar built with a total, so such a
	// bar is aborted (and kept on screen) or Wait would never return.
	if p.bar.Current() < int64(p.total/time.Millisecond) {
		p.bar.Abort(false)
	} else {
		p.bar.SetTotal(-1, true)
	}
	p.p.Wait()
}
