package engine

import (
	"fmt"
	"io"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// Progress shows how far a run has come in virtual time: a bar on a
// terminal, or a line at each tenth of the run where the output is not one
// (a log file, CI). A nil writer gives a progress that shows nothing. The
// lines depend on virtual time only, never on the OS clock, so that the
// same run prints the same lines.
type Progress struct {
	p     *mpb.Progress
	bar   *mpb.Bar
	total time.Duration
	// lines, when not nil, gets the lines; name heads each; next is the
	// next tenth to print (1 … 10).
	lines io.Writer
	name  string
	next  int64
}

// NewProgressLines returns a progress that writes "NAME: 30 % (27s of 1m30s
// simulated)" to w at each tenth of total.
func NewProgressLines(w io.Writer, name string, total time.Duration) *Progress {
	if w == nil || total <= 0 {
		return &Progress{}
	}
	return &Progress{lines: w, name: name, total: total, next: 1}
}

// NewProgress returns a progress that shows a bar on w, a terminal.
func NewProgress(w io.Writer, name string, total time.Duration) *Progress {
	if w == nil || total <= 0 {
		return &Progress{}
	}
	p := mpb.New(mpb.WithOutput(w), mpb.WithWidth(40), mpb.WithAutoRefresh())
	bar := p.AddBar(int64(total/time.Millisecond),
		mpb.PrependDecorators(decor.Name(name+" ", decor.WC{C: decor.DindentRight}), decor.Percentage()),
		mpb.AppendDecorators(decor.Elapsed(decor.ET_STYLE_GO), decor.Name(" wall")),
	)
	return &Progress{p: p, bar: bar, total: total}
}

// Set shows that the run has reached now (virtual time, or since a real
// run's start).
func (p *Progress) Set(now time.Duration) {
	if p.lines != nil {
		p.line(now)
		return
	}
	if p.bar == nil {
		return
	}
	// A real run's clock overshoots its duration; a bar past its total
	// completes early and never redraws.
	p.bar.SetCurrent(int64(min(now, p.total) / time.Millisecond))
}

// line writes the lines of the tenths of the run that now has reached.
func (p *Progress) line(now time.Duration) {
	now = min(now, p.total)
	for p.next <= 10 && int64(now) >= int64(p.total)/10*p.next {
		at := p.total / 10 * time.Duration(p.next)
		if p.next == 10 {
			at = p.total
		}
		fmt.Fprintf(p.lines, "%s: %d %% (%v of %v simulated)\n", p.name, 10*p.next, at, p.total)
		p.next++
	}
}

// Done ends the progress: a bar is completed, or aborted and kept on
// screen for a run that ended short.
func (p *Progress) Done() {
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
