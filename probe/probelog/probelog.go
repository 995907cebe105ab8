// Package probelog reads and writes the recorded probe stream of a run
// (probes.bin): per window and per out-edge, every answered probe's four
// timestamps, so that estimators can be re-run offline long after the run.
//
// # File format
//
// A log is a header followed by blocks, and is only ever appended to.
//
//	header  = magic "CHRONOSYNC-PROBES\n", uvarint len, len bytes of Meta as JSON
//	block   = uvarint len, len bytes of payload, CRC-32C (Castagnoli) of the
//	          payload, 4 bytes little-endian
//
// The writer hands each block to the underlying io.Writer in one Write call,
// so that a crash leaves whole blocks followed at most by a torn tail, which
// the reader reports as ErrTruncated.
//
// A payload holds, as varints (uvarint for the non-negative fields, zig-zag
// varint for the signed ones): Src, Dst, RoundID, WindowID, WindowStart,
// WindowEnd − WindowStart, SentPairs, Lost, the number of probes, then per
// probe six varints:
//
//	Pair − previous Pair (zig-zag; the first probe's previous Pair is 0)
//	Slot + 2·T3Source (uvarint; Slot 0 or 1, T3Source 0, 1 (user) or 2
//	    (kernel), see estimate.T3Source)
//	T1 − previous T1 (zig-zag; the first probe's previous T1 is WindowStart)
//	(T2 − T1) − (previous T2 − previous T1) (zig-zag; the first probe's
//	    previous forward difference is 0)
//	T3 − T2 (zig-zag)
//	T4 − T1 (zig-zag)
//
// # Versions
//
// Schema 2 (Schema, what the writer writes) added T3Source to the second
// varint of a probe. Schema 1, written before the responder's transmit
// timestamp was carried back (issue 17), holds the bare Slot there; the
// reader still reads it, every probe's T3Source being T3Unrecorded (its T3
// was the responder's user-space clock reading). `chronosync run` again
// with the run's scenario and seed writes a schema 2 stream.
//
// The differences of timestamps are taken modulo 2^64 (Go's wrapping int64
// arithmetic), which the decoder undoes exactly: every int64 value, including
// ones near the limits, round-trips bit for bit; extreme values merely cost up
// to 10 bytes a varint.
//
// # Size
//
// A realistic stream (pairs every 800 µs, ±50 ms offsets, 20–50 µs one-way
// delays with jitter, 50 ns read noise, 1% loss; see TestBytesPerProbe)
// takes 12.7 bytes per probe, header and framing included, against 37 for the
// fixed-width fields. BenchmarkWriteRead reports the figure too.
//
// # Validation
//
// The reader checks the CRC of every block, then every value it decodes: a
// varint that overflows 64 bits, a count that does not fit an int or that the
// payload cannot hold, a Slot other than 0 or 1, a T3Source beyond
// T3Kernel (or any in schema 1), a Pair outside uint32, a Src or Dst
// outside [0, Meta.Nodes), a WindowEnd before WindowStart, trailing bytes.
// All of these are ErrCorrupt, as is a header whose Meta.Nodes is outside
// [MinNodes, MaxNodes]. Every error names the block (its index, counting
// from 0, and its byte offset) and the field at fault, e.g.
//
//	probes.bin: block 3 at byte 1207: corrupt probe log: payload byte 1: dst 4294967298 out of range [0, 4)
//
// (led by the file's path where the log was read with ReadFile, by
// "probelog" otherwise). The reader never allocates more than the bytes it
// has actually read justify, so a lying length or count costs nothing. It
// does not cross-check SentPairs, Lost and len(Probes): it stores what the
// node reported.
package probelog

import (
	"errors"

	"github.com/chronosync/chronosync/estimate"
)

// Magic opens every probe log.
const Magic = "CHRONOSYNC-PROBES\n"

// Schema is the version of the format this package writes; it reads this
// one and SchemaV1.
const Schema = 2

// SchemaV1 is the format before each probe recorded its T3Source.
const SchemaV1 = 1

// Limits on what a header or a block may claim, beyond which the reader says
// ErrCorrupt and the writer refuses. Every limit of the format is here.
const (
	// MaxMetaBytes bounds the header's JSON.
	MaxMetaBytes = 1 << 20
	// MaxPayloadBytes bounds one block's payload.
	MaxPayloadBytes = 1 << 30
	// MinNodes and MaxNodes bound Meta.Nodes, and every block's Src and
	// Dst lie in [0, Meta.Nodes): a log always states its node count, and
	// no node id it holds can overflow the int32 of the protocol's
	// messages. MaxNodes (2^20) is far beyond any run's probe graph.
	MinNodes = 1
	MaxNodes = 1 << 20
)

// minProbeBytes is the smallest encoding of one probe: six one-byte varints.
const minProbeBytes = 6

// Meta describes a log; it is stored as JSON in the header.
type Meta struct {
	Schema int    `json:"schema"` // Schema (or SchemaV1, read only); NewWriter sets it when 0
	RunID  string `json:"run_id"`
	Nodes  int    `json:"nodes"`  // the number of nodes, MinNodes to MaxNodes; every block's Src and Dst are below it
	Units  string `json:"units"`  // of every timestamp; NewWriter sets "ns" when empty
	Source string `json:"source"` // where the timestamps came from, e.g. "sim" or "real/so_timestamping"
}

// Block is what one node hands over for one out-edge at the end of one
// window.
type Block struct {
	Src, Dst    int    // the edge src→dst; node ids
	RoundID     uint64 // the round the window belongs to
	WindowID    uint64
	WindowStart int64            // src's clock
	WindowEnd   int64            // src's clock; not before WindowStart
	SentPairs   int              // pairs sent in the window
	Lost        int              // probes that got no reply
	Probes      []estimate.Probe // answered probes, in send order
}

// Errors the reader wraps; the message around them gives the byte offset of
// the block (or header) at fault.
var (
	// ErrTruncated: the log ends inside the header or a block, as a crash
	// during an append leaves it.
	ErrTruncated = errors.New("truncated probe log")
	// ErrCorrupt: a CRC mismatch or a value that cannot be.
	ErrCorrupt = errors.New("corrupt probe log")
	// ErrNotProbeLog: the input does not start with Magic.
	ErrNotProbeLog = errors.New("not a probe log")
)

// T3Sources counts the block's probes by where their T3 came from: the
// kernel's transmit timestamp of the reply, the responder's user-space
// reading, or unrecorded (a log of SchemaV1).
func (b *Block) T3Sources() (kernel, user, unrecorded int) {
	for i := range b.Probes {
		switch b.Probes[i].T3Source {
		case estimate.T3Kernel:
			kernel++
		case estimate.T3User:
			user++
		default:
			unrecorded++
		}
	}
	return kernel, user, unrecorded
}
