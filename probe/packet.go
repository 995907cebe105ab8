package probe

import (
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/chronosync/chronosync/model/globaltime"
	"math"
)

// Port is the UDP port every node probes from and answers on.
const Port uint16 = 7100

// PacketSize is the size of every probe request and reply. Both directions
// carry the same number of bytes so that a rate-limited link serialises them
// equally: a size difference would be a path asymmetry no estimator can see.
const PacketSize = 72

const (
	magic       = 0x4353 // "CS"
	version     = 2      // 2: replies carry the previous reply's transmit timestamp
	kindRequest = 1
	kindReply   = 2
)

// The bits of a reply's flags byte.
const (
	flagAdvert     = 1 << iota // the advert is valid
	flagPrev                   // the reply carries the previous reply's transmit timestamp
	flagPrevKernel             // ... and it is the kernel's (else the user-space fallback)
	flagPrevSlot1              // ... and that reply answered slot 1 (else slot 0)
	flagsKnown     = flagAdvert | flagPrev | flagPrevKernel | flagPrevSlot1
)

// Layout of a packet (big endian; every byte not named is zero):
//
//	0–1    magic "CS"          4–11   window     16  slot
//	2      version             12–15  pair
//	3      kind
//
// and of a reply, after the header:
//
//	17     flags (flagAdvert, flagPrev, flagPrevKernel, flagPrevSlot1)
//	18     window − previous window, int8
//	20–27  t2                  36–39  previous pair
//	28–35  t3 (user space)     40–63  advert: offset, drift (float64), anchor
//	64–71  previous t3: the transmit timestamp of the previous reply to the
//	       same requester

// Advert is the state a node piggybacks on its probe replies: its current
// clock correction in consensus mode. Global time on the node is
// local − Offset − Drift·(local − Anchor).
type Advert struct {
	Valid bool
	// Linear is the correction: global = local − Offset − Drift·(local −
	// Anchor), Anchor a reading of the node's clock.
	globaltime.Linear
}

// header is what requests and replies share.
type header struct {
	kind   byte
	window uint64
	pair   uint32
	slot   uint8
}

// reply is a decoded reply: the header plus the responder's timestamps and
// advert. t3 is the responder's clock read just before it sent this reply;
// prev, when valid, is the transmit timestamp of its previous reply to the
// same requester (chrony's interleaved mode).
type reply struct {
	header
	t2, t3 int64
	advert Advert
	prev   txStamp
}

// txStamp is the transmit timestamp of one reply, named by the probe it
// answered.
type txStamp struct {
	valid  bool
	kernel bool // the kernel's transmit timestamp, not the user-space fallback
	window uint64
	pair   uint32
	slot   uint8
	t3     int64
}

var errMalformed = errors.New("probe: malformed packet")

func putHeader(b []byte, h header) {
	clear(b[:PacketSize])
	binary.BigEndian.PutUint16(b[0:], magic)
	b[2] = version
	b[3] = h.kind
	binary.BigEndian.PutUint64(b[4:], h.window)
	binary.BigEndian.PutUint32(b[12:], h.pair)
	b[16] = h.slot
}

// windowDelta returns window − prev as the int8 a reply carries, and
// whether it fits.
func windowDelta(window, prev uint64) (int8, bool) {
	d := int64(window - prev) // modulo 2^64, read as signed
	return int8(d), d >= math.MinInt8 && d <= math.MaxInt8
}

// putReply encodes r; a valid r.prev must have a window within int8 of
// r.window (see windowDelta), else it is left out.
func putReply(b []byte, r reply) {
	putHeader(b, r.header)
	var flags byte
	if r.advert.Valid {
		flags |= flagAdvert
	}
	if d, ok := windowDelta(r.window, r.prev.window); r.prev.valid && ok {
		flags |= flagPrev
		if r.prev.kernel {
			flags |= flagPrevKernel
		}
		if r.prev.slot == 1 {
			flags |= flagPrevSlot1
		}
		b[18] = byte(d)
		binary.BigEndian.PutUint32(b[36:], r.prev.pair)
		binary.BigEndian.PutUint64(b[64:], uint64(r.prev.t3))
	}
	b[17] = flags
	binary.BigEndian.PutUint64(b[20:], uint64(r.t2))
	binary.BigEndian.PutUint64(b[28:], uint64(r.t3))
	binary.BigEndian.PutUint64(b[40:], math.Float64bits(r.advert.Offset))
	binary.BigEndian.PutUint64(b[48:], math.Float64bits(r.advert.Drift))
	binary.BigEndian.PutUint64(b[56:], uint64(r.advert.Anchor))
}

func parse(b []byte) (reply, error) {
	var r reply
	if len(b) != PacketSize {
		return r, fmt.Errorf("%w: %d bytes, want %d", errMalformed, len(b), PacketSize)
	}
	if binary.BigEndian.Uint16(b) != magic || b[2] != version {
		return r, fmt.Errorf("%w: bad magic or version", errMalformed)
	}
	r.kind = b[3]
	r.window = binary.BigEndian.Uint64(b[4:])
	r.pair = binary.BigEndian.Uint32(b[12:])
	r.slot = b[16]
	if r.slot > 1 || (r.kind != kindRequest && r.kind != kindReply) {
		return r, fmt.Errorf("%w: kind %d slot %d", errMalformed, r.kind, r.slot)
	}
	if r.kind == kindReply {
		flags := b[17]
		if flags&^flagsKnown != 0 {
			return r, fmt.Errorf("%w: reply flags %#x", errMalformed, flags)
		}
		r.t2 = int64(binary.BigEndian.Uint64(b[20:]))
		r.t3 = int64(binary.BigEndian.Uint64(b[28:]))
		if flags&flagPrev != 0 {
			r.prev = txStamp{
				valid:  true,
				kernel: flags&flagPrevKernel != 0,
				window: r.window - uint64(int64(int8(b[18]))),
				pair:   binary.BigEndian.Uint32(b[36:]),
				t3:     int64(binary.BigEndian.Uint64(b[64:])),
			}
			if flags&flagPrevSlot1 != 0 {
				r.prev.slot = 1
			}
		}
		r.advert = Advert{Valid: flags&flagAdvert != 0, Linear: globaltime.Linear{
			Offset: math.Float64frombits(binary.BigEndian.Uint64(b[40:])),
			Drift:  math.Float64frombits(binary.BigEndian.Uint64(b[48:])),
			Anchor: int64(binary.BigEndian.Uint64(b[56:])),
		}}
	}
	return r, nil
}
