package timepage

import (
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// MaxRetries is how many times a Reader tries for a consistent copy of the
// model (the sequence even and unchanged, and the checksum right) before
// it answers ErrTorn. A Publish takes well under a microsecond, so only a
// dead or runaway writer exhausts it.
const MaxRetries = 1000

// Stats counts a Reader's work.
type Stats struct {
	// Reads counts consistent copies of the model taken.
	Reads uint64
	// SeqRetries counts tries the seqlock refused (the sequence odd or
	// changed during the copy): the expected, harmless kind.
	SeqRetries uint64
	// ChecksumFailures counts copies the seqlock passed but the checksum
	// refused: torn reads the seqlock let through. With a correct writer
	// and reader this is 0; anything else is a bug (or a foreign writer).
	ChecksumFailures uint64
}

// Reader reads a page. It is not safe for concurrent use (its Stats are
// plain counters); make one per goroutine, they are cheap.
type Reader struct {
	page  Page
	mem   *[PageSize / 8]uint64 // the page's words where it offers them (wordPage), else nil
	stats Stats
}

// NewReader checks page's header (magic, version, size) and returns a
// reader of it. The page must stay mapped while the reader is used: a
// Reader of a FilePage that has been closed faults.
func NewReader(page Page) (*Reader, error) {
	if !littleEndian() {
		return nil, fmt.Errorf("timepage: the page layout is little-endian; this host is not")
	}
	w0 := page.Load64(OffMagic)
	if uint32(w0) != Magic {
		return nil, fmt.Errorf("timepage: magic %#08x at byte 0, expected %#08x (\"CSTP\"): %w", uint32(w0), uint32(Magic), ErrLayout)
	}
	if v := uint32(w0 >> 32); v != Version {
		return nil, fmt.Errorf("timepage: version %d at byte 4, this reader reads version %d: %w", v, Version, ErrLayout)
	}
	if s := uint32(page.Load64(OffSize)); s != PageSize {
		return nil, fmt.Errorf("timepage: size %d at byte 8, expected %d: %w", s, PageSize, ErrLayout)
	}
	r := &Reader{page: page}
	if wp, ok := page.(wordPage); ok {
		r.mem = wp.words64()
	}
	return r, nil
}

// Stats returns the reader's counts so far.
func (r *Reader) Stats() Stats { return r.stats }

// Load returns a consistent copy of the model: ErrNoModel when none was
// published, ErrTorn after MaxRetries inconsistent tries. It does not
// judge the deadline or the status (ToGlobal does).
func (r *Reader) Load() (Model, error) {
	var w [ModelWords]uint64
	if err := r.load(&w); err != nil {
		return Model{}, err
	}
	m := fromWords(&w)
	if m.Status == StatusNone {
		return Model{}, ErrNoModel
	}
	return m, nil
}

// load copies the model region consistently into w: the seqlock's read
// side, then the checksum.
func (r *Reader) load(w *[ModelWords]uint64) error {
	if r.mem == nil {
		return r.loadPage(w)
	}
	mem := r.mem
	for try := 0; try < MaxRetries; try++ {
		s1 := atomic.LoadUint64(&mem[OffSeq/8])
		if s1&1 == 1 {
			r.stats.SeqRetries++
			if try%64 == 63 {
				runtime.Gosched()
			}
			continue
		}
		if s1 == 0 {
			return ErrNoModel
		}
		sum := atomic.LoadUint64(&mem[OffChecksum/8])
		for i := range w {
			w[i] = atomic.LoadUint64(&mem[OffModel/8+i])
		}
		if atomic.LoadUint64(&mem[OffSeq/8]) != s1 {
			r.stats.SeqRetries++
			continue
		}
		if Checksum(w) != sum {
			r.stats.ChecksumFailures++
			continue
		}
		r.stats.Reads++
		return nil
	}
	return r.torn()
}

func (r *Reader) torn() error {
	return fmt.Errorf("%w (%d tries; %d seqlock retries, %d checksum failures so far)",
		ErrTorn, MaxRetries, r.stats.SeqRetries, r.stats.ChecksumFailures)
}

// loadPage is load through the Page interface, for pages that are not a
// wordPage.
func (r *Reader) loadPage(w *[ModelWords]uint64) error {
	for try := 0; try < MaxRetries; try++ {
		s1 := r.page.Load64(OffSeq)
		if s1&1 == 1 {
			r.stats.SeqRetries++
			if try%64 == 63 {
				runtime.Gosched()
			}
			continue
		}
		if s1 == 0 {
			return ErrNoModel
		}
		sum := r.page.Load64(OffChecksum)
		for i := range w {
			w[i] = r.page.Load64(OffModel + 8*i)
		}
		if r.page.Load64(OffSeq) != s1 {
			r.stats.SeqRetries++
			continue
		}
		if Checksum(w) != sum {
			r.stats.ChecksumFailures++
			continue
		}
		r.stats.Reads++
		return nil
	}
	return r.torn()
}

// ToGlobal maps localNs, a reading of the node's clock (the model's
// ClockID, CLOCK_REALTIME), to global time with its 1σ in ns. Past the
// model's deadline it returns the extrapolation with ErrStale; where the
// node published StatusFailed, with ErrFailed; never hidden. ErrNoModel
// and ErrTorn come with zeros.
func (r *Reader) ToGlobal(localNs int64) (globalNs int64, sigmaNs float64, err error) {
	if r.mem != nil {
		if g, s, ok, err := r.fastToGlobal(localNs); ok {
			return g, s, err
		}
	}
	var w [ModelWords]uint64
	if err := r.load(&w); err != nil {
		return 0, 0, err
	}
	return judge(&w, localNs)
}

// fastToGlobal is ToGlobal's first try on a wordPage, written out in one
// function (Go inlines none of load, Checksum and wordsToGlobal): the
// seqlock, the checksum and the model as they are, in the same order of
// operations, so the answers are the same bit for bit. ok is false where
// it needs the full protocol (sequence odd or zero, changed, or the
// checksum wrong: counted), which ToGlobal then runs.
func (r *Reader) fastToGlobal(local int64) (g int64, sigma float64, ok bool, err error) {
	mem := r.mem
	s1 := atomic.LoadUint64(&mem[OffSeq/8])
	if s1&1 == 1 || s1 == 0 {
		return 0, 0, false, nil
	}
	sum := atomic.LoadUint64(&mem[OffChecksum/8])
	const m0 = OffModel / 8
	w0, w1, w2, w3 := atomic.LoadUint64(&mem[m0]), atomic.LoadUint64(&mem[m0+1]), atomic.LoadUint64(&mem[m0+2]), atomic.LoadUint64(&mem[m0+3])
	w4, w5, w6, w7 := atomic.LoadUint64(&mem[m0+4]), atomic.LoadUint64(&mem[m0+5]), atomic.LoadUint64(&mem[m0+6]), atomic.LoadUint64(&mem[m0+7])
	w8, w9, w10, w11 := atomic.LoadUint64(&mem[m0+8]), atomic.LoadUint64(&mem[m0+9]), atomic.LoadUint64(&mem[m0+10]), atomic.LoadUint64(&mem[m0+11])
	w12, w13, w14, w15 := atomic.LoadUint64(&mem[m0+12]), atomic.LoadUint64(&mem[m0+13]), atomic.LoadUint64(&mem[m0+14]), atomic.LoadUint64(&mem[m0+15])
	if atomic.LoadUint64(&mem[OffSeq/8]) != s1 {
		return 0, 0, false, nil
	}
	const prime = 0x100000001b3
	const seed = 0xcbf29ce484222325
	l0 := ((((seed^w0)*prime^w4)*prime^w8)*prime ^ w12) * prime
	l1 := (((((seed^1)^w1)*prime^w5)*prime^w9)*prime ^ w13) * prime
	l2 := (((((seed^2)^w2)*prime^w6)*prime^w10)*prime ^ w14) * prime
	l3 := (((((seed^3)^w3)*prime^w7)*prime^w11)*prime ^ w15) * prime
	h := l0 ^ bits.RotateLeft64(l1, 17) ^ bits.RotateLeft64(l2, 31) ^ bits.RotateLeft64(l3, 47)
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	if h != sum {
		r.stats.ChecksumFailures++
		return 0, 0, false, nil
	}
	r.stats.Reads++
	status := Status(uint16(w15 >> 32))
	if status == StatusNone {
		return 0, 0, true, ErrNoModel
	}
	start := int64(w2)
	drift := math.Float64frombits(w5) * 1e-6
	d := float64(local - start)
	corr := math.Float64frombits(w4) + drift*d + (1-drift)*math.Float64frombits(w8)
	x := math.Float64frombits(w7) * 1e-6 * (d - float64(int64(w3)-start)/2)
	sg := math.Float64frombits(w6)
	v := sg*sg + x*x + math.Float64frombits(w9)
	if local < int64(w11) {
		a := math.Float64frombits(w10) * math.Abs(1-drift)
		v += a * a
	}
	g, sigma = local-int64(math.Round(corr)), math.Sqrt(v)
	switch {
	case status == StatusFailed:
		return g, sigma, true, ErrFailed
	case local > int64(w12):
		return g, sigma, true, ErrStale
	}
	return g, sigma, true, nil
}

// judge is ToGlobal of a loaded model region.
func judge(w *[ModelWords]uint64, localNs int64) (int64, float64, error) {
	switch Status(uint16(w[15] >> 32)) {
	case StatusNone:
		return 0, 0, ErrNoModel
	case StatusFailed:
		g, s := wordsToGlobal(w, localNs)
		return g, s, ErrFailed
	}
	g, s := wordsToGlobal(w, localNs)
	if localNs > int64(w[12]) {
		return g, s, ErrStale
	}
	return g, s, nil
}

// NowGlobal is ToGlobal of the model's clock read now (clock_gettime;
// time.Now for CLOCK_REALTIME). For
// real nodes' readers only: the simulator passes its own clock's readings
// to ToGlobal.
func (r *Reader) NowGlobal() (globalNs int64, sigmaNs float64, err error) {
	var w [ModelWords]uint64
	if err := r.load(&w); err != nil {
		return 0, 0, err
	}
	clock := int32(uint32(w[15]))
	if clock == ClockRealtime {
		return judge(&w, time.Now().UnixNano()) // the vDSO's clock_gettime(CLOCK_REALTIME)
	}
	var ts unix.Timespec
	if err := unix.ClockGettime(clock, &ts); err != nil {
		return 0, 0, fmt.Errorf("timepage: clock_gettime(%d): %w", clock, err)
	}
	return judge(&w, ts.Nano())
}
