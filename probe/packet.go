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
	version     = 1
	kindRequest = 1
	kindReply   = 2
)

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
// advert.
type reply struct {
	header
	t2, t3 int64
	advert Advert
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

func putReply(b []byte, r reply) {
	putHeader(b, r.header)
	binary.BigEndian.PutUint64(b[20:], uint64(r.t2))
	binary.BigEndian.PutUint64(b[28:], uint64(r.t3))
	if r.advert.Valid {
		b[36] = 1
	}
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
		r.t2 = int64(binary.BigEndian.Uint64(b[20:]))
		r.t3 = int64(binary.BigEndian.Uint64(b[28:]))
		r.advert = Advert{Valid: b[36] == 1, Linear: globaltime.Linear{
			Offset: math.Float64frombits(binary.BigEndian.Uint64(b[40:])),
			Drift:  math.Float64frombits(binary.BigEndian.Uint64(b[48:])),
			Anchor: int64(binary.BigEndian.Uint64(b[56:])),
		}}
	}
	return r, nil
}
