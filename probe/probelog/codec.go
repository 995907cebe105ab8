package probelog

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/chronosync/chronosync/estimate"
)

// checkNodes says why a log may not claim nodes nodes (Meta.Nodes), or nil.
func checkNodes(nodes int) error {
	if nodes < MinNodes || nodes > MaxNodes {
		return fmt.Errorf("nodes %d out of range [%d, %d]", nodes, MinNodes, MaxNodes)
	}
	return nil
}

// checkBlock says why w may not store b, or nil; nodes is Meta.Nodes.
func checkBlock(b *Block, nodes int) error {
	switch {
	case b.Src < 0 || b.Src >= nodes:
		return fmt.Errorf("src %d out of range [0, %d)", b.Src, nodes)
	case b.Dst < 0 || b.Dst >= nodes:
		return fmt.Errorf("dst %d out of range [0, %d)", b.Dst, nodes)
	case b.WindowEnd < b.WindowStart:
		return fmt.Errorf("window end %d before window start %d", b.WindowEnd, b.WindowStart)
	case b.SentPairs < 0:
		return fmt.Errorf("negative SentPairs %d", b.SentPairs)
	case b.Lost < 0:
		return fmt.Errorf("negative Lost %d", b.Lost)
	}
	for i := range b.Probes {
		if s := b.Probes[i].Slot; s > 1 {
			return fmt.Errorf("probe %d: Slot %d, want 0 or 1", i, s)
		}
		if s := b.Probes[i].T3Source; s > estimate.T3Kernel {
			return fmt.Errorf("probe %d: T3Source %d, want at most %d (%v)", i, s, estimate.T3Kernel, estimate.T3Kernel)
		}
	}
	return nil
}

// appendPayload appends the encoding of b (see the package doc) to dst.
func appendPayload(dst []byte, b *Block) []byte {
	dst = binary.AppendUvarint(dst, uint64(b.Src))
	dst = binary.AppendUvarint(dst, uint64(b.Dst))
	dst = binary.AppendUvarint(dst, b.RoundID)
	dst = binary.AppendUvarint(dst, b.WindowID)
	dst = binary.AppendVarint(dst, b.WindowStart)
	dst = binary.AppendVarint(dst, b.WindowEnd-b.WindowStart)
	dst = binary.AppendUvarint(dst, uint64(b.SentPairs))
	dst = binary.AppendUvarint(dst, uint64(b.Lost))
	dst = binary.AppendUvarint(dst, uint64(len(b.Probes)))
	prevPair, prevT1, prevFwd := int64(0), b.WindowStart, int64(0)
	for i := range b.Probes {
		p := &b.Probes[i]
		fwd := p.T2 - p.T1
		dst = binary.AppendVarint(dst, int64(p.Pair)-prevPair)
		dst = binary.AppendUvarint(dst, uint64(p.Slot)+2*uint64(p.T3Source))
		dst = binary.AppendVarint(dst, p.T1-prevT1)
		dst = binary.AppendVarint(dst, fwd-prevFwd)
		dst = binary.AppendVarint(dst, p.T3-p.T2)
		dst = binary.AppendVarint(dst, p.T4-p.T1)
		prevPair, prevT1, prevFwd = int64(p.Pair), p.T1, fwd
	}
	return dst
}

// decoder walks a payload; the first problem sticks in err.
type decoder struct {
	b   []byte
	i   int
	err error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("payload byte %d: "+format, append([]any{d.i}, args...)...)
	}
}

func (d *decoder) uvarint(what string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.i:])
	if n <= 0 {
		d.fail("%s: bad or unterminated varint", what)
		return 0
	}
	d.i += n
	return v
}

func (d *decoder) varint(what string) int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b[d.i:])
	if n <= 0 {
		d.fail("%s: bad or unterminated varint", what)
		return 0
	}
	d.i += n
	return v
}

// count reads a non-negative int no larger than limit.
func (d *decoder) count(what string, limit uint64) int {
	at := d.i
	v := d.uvarint(what)
	if d.err == nil && v > limit {
		d.i = at
		d.fail("%s: %d exceeds %d", what, v, limit)
		return 0
	}
	return int(v)
}

// node reads a node id, which must lie in [0, nodes).
func (d *decoder) node(what string, nodes int) int {
	at := d.i
	v := d.uvarint(what)
	if d.err == nil && (nodes < 1 || v >= uint64(nodes)) {
		d.i = at
		d.fail("%s %d out of range [0, %d)", what, v, nodes)
		return 0
	}
	return int(v)
}

// decodePayload decodes one payload of the given schema (Schema or
// SchemaV1); nodes is Meta.Nodes.
func decodePayload(p []byte, schema, nodes int) (*Block, error) {
	d := &decoder{b: p}
	b := &Block{}
	b.Src = d.node("src", nodes)
	b.Dst = d.node("dst", nodes)
	b.RoundID = d.uvarint("round id")
	b.WindowID = d.uvarint("window id")
	b.WindowStart = d.varint("window start")
	at := d.i
	b.WindowEnd = b.WindowStart + d.varint("window length")
	if d.err == nil && b.WindowEnd < b.WindowStart {
		d.i = at
		d.fail("window end %d before window start %d", b.WindowEnd, b.WindowStart)
	}
	b.SentPairs = d.count("sent pairs", math.MaxInt)
	b.Lost = d.count("lost", math.MaxInt)
	// Cap the count by what the rest of the payload can hold before
	// allocating anything.
	n := d.count("probe count", uint64(len(p)-d.i)/minProbeBytes)
	if d.err != nil {
		return nil, d.err
	}
	if n > 0 {
		b.Probes = make([]estimate.Probe, n)
	}
	prevPair, prevT1, prevFwd := int64(0), b.WindowStart, int64(0)
	for k := 0; k < n && d.err == nil; k++ {
		at := d.i
		dp := d.varint("pair delta")
		slot := d.uvarint("slot")
		var src uint64
		if schema != SchemaV1 {
			slot, src = slot%2, slot/2
		}
		dt1 := d.varint("T1 delta")
		dfwd := d.varint("forward difference delta")
		turn := d.varint("T3−T2")
		rtt := d.varint("T4−T1")
		if d.err != nil {
			break
		}
		pair := prevPair + dp
		if dp < -math.MaxUint32 || dp > math.MaxUint32 || pair < 0 || pair > math.MaxUint32 {
			d.i = at
			d.fail("probe %d: pair %d+%d outside uint32", k, prevPair, dp)
			break
		}
		if slot > 1 {
			d.i = at
			d.fail("probe %d: slot %d, want 0 or 1", k, slot)
			break
		}
		if src > uint64(estimate.T3Kernel) {
			d.i = at
			d.fail("probe %d: T3 source %d, want at most %d", k, src, estimate.T3Kernel)
			break
		}
		pr := &b.Probes[k]
		pr.Pair, pr.Slot, pr.T3Source = uint32(pair), uint8(slot), estimate.T3Source(src)
		pr.T1 = prevT1 + dt1
		fwd := prevFwd + dfwd
		pr.T2 = pr.T1 + fwd
		pr.T3 = pr.T2 + turn
		pr.T4 = pr.T1 + rtt
		prevPair, prevT1, prevFwd = pair, pr.T1, fwd
	}
	if d.err == nil && d.i != len(p) {
		d.fail("%d trailing bytes", len(p)-d.i)
	}
	if d.err != nil {
		return nil, d.err
	}
	return b, nil
}
