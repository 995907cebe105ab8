package timepage

import (
	"fmt"
	"math"
)

// Publisher writes models to a page. It is the page's only writer (the
// node's lock file makes it one per host and cluster) and is not safe for
// concurrent use.
type Publisher struct {
	page Page
	last Model
	have bool
}

// NewPublisher takes over page, writing its header (magic, version, size,
// pid) when it is not this version's; a page that already is keeps its
// model and sequence, so readers go on reading the previous publisher's
// model until the first Publish. pid is the publisher's process id (0 in
// the simulator).
func NewPublisher(page Page, pid int) (*Publisher, error) {
	if !littleEndian() {
		return nil, fmt.Errorf("timepage: the page layout is little-endian; this host is not")
	}
	if pid < 0 || pid > math.MaxUint32 {
		return nil, fmt.Errorf("timepage: pid %d out of uint32 range", pid)
	}
	w0 := uint64(Magic) | uint64(Version)<<32
	if page.Load64(OffMagic) != w0 || uint32(page.Load64(OffSize)) != PageSize {
		// A page of another layout: start from nothing. The sequence
		// goes odd first, so a reader of a half-written header cannot
		// take it as a model.
		page.Store64(OffSeq, 1)
		for off := OffChecksum; off < PageSize; off += 8 {
			page.Store64(off, 0)
		}
		page.Store64(OffSize, uint64(PageSize)|uint64(pid)<<32)
		page.Store64(OffMagic, w0)
		page.Store64(OffSeq, 0)
	} else {
		page.Store64(OffSize, uint64(PageSize)|uint64(pid)<<32)
		if page.Load64(OffSeq)&1 == 1 {
			// The previous publisher died mid-write: the model region
			// is torn. Make the sequence even only with a new model.
			// Still odd, so readers wait: clear the model (status
			// none: ErrNoModel until Publish), checksum it, go even.
			var zero [ModelWords]uint64
			for i := range zero {
				page.Store64(OffModel+8*i, 0)
			}
			page.Store64(OffChecksum, Checksum(&zero))
			page.Store64(OffSeq, page.Load64(OffSeq)+1)
		}
	}
	return &Publisher{page: page}, nil
}

// Publish writes m under the seqlock: the sequence goes odd, the model
// words and their checksum are stored, the sequence goes even (one more
// than odd). Every store is an atomic (sequentially consistent) store, so
// a reader that sees the even sequence after the words also sees them
// whole.
func (p *Publisher) Publish(m Model) error {
	if err := m.Check(); err != nil {
		return err
	}
	w := m.words()
	sum := Checksum(&w)
	seq := p.page.Load64(OffSeq)
	if seq&1 == 1 {
		seq++ // cannot happen with one publisher; keep the protocol's parity
	}
	p.page.Store64(OffSeq, seq+1)
	for i, v := range w {
		p.page.Store64(OffModel+8*i, v)
	}
	p.page.Store64(OffChecksum, sum)
	p.page.Store64(OffSeq, seq+2)
	p.last, p.have = m, true
	return nil
}

// Expire republishes the last model with its deadline brought forward to
// localNs (if that is earlier), so that readers get ErrStale from localNs
// on: what a node does when it stops cleanly. Without a model published by
// this Publisher it does nothing.
func (p *Publisher) Expire(localNs int64) error {
	if !p.have {
		return nil
	}
	m := p.last
	m.ValidUntilNS = min(m.ValidUntilNS, localNs)
	return p.Publish(m)
}

// Last returns the last model published and whether there was one.
func (p *Publisher) Last() (Model, bool) { return p.last, p.have }
