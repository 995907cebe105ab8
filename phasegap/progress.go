package phasegap

import "runtime"

// progressThread is --progress progress_thread: a helper thread, locked
// to its own OS thread and started once, that tests the exchange from the
// moment the master posted it until it completed, while the master
// computes (MPI_THREAD_MULTIPLE: the helper calls MPI_Testall). The
// master then takes the completion from it instead of waiting itself.
type progressThread struct {
	h           Halo
	now         func() int64
	start, done chan struct{}
	// What the last exchange took, read by the master after done.
	doneAt, pollNS int64
	tests          int
	err            error
}

func newProgressThread(h Halo, now func() int64) *progressThread {
	p := &progressThread{h: h, now: now, start: make(chan struct{}, 1), done: make(chan struct{}, 1)}
	go p.run()
	return p
}

func (p *progressThread) run() {
	runtime.LockOSThread()
	for range p.start {
		p.tests, p.pollNS, p.err = 0, 0, nil
		for {
			t := p.now()
			ok, err := p.h.Test()
			now := p.now()
			p.pollNS += now - t
			p.tests++
			if err != nil || ok {
				p.doneAt, p.err = now, err
				break
			}
		}
		p.done <- struct{}{}
	}
}

// begin hands the posted exchange to the helper.
func (p *progressThread) begin() { p.start <- struct{}{} }

// finish waits for the helper to see the exchange complete.
func (p *progressThread) finish() { <-p.done }

// close ends the helper.
func (p *progressThread) close() { close(p.start) }
