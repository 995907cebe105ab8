package probelog

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
)

// castagnoli is the CRC-32C table of the block checksums.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Writer appends blocks to a probe log. It is not safe for concurrent use.
type Writer struct {
	w    io.Writer
	meta Meta
	buf  []byte
	err  error // sticky: after a failed Write the tail may be torn
}

// NewWriter writes the header for m to w, in one Write call, and returns a
// Writer that appends blocks after it. A zero m.Schema becomes Schema and an
// empty m.Units "ns"; any other schema, or an m.Nodes outside [MinNodes,
// MaxNodes], is an error.
func NewWriter(w io.Writer, m Meta) (*Writer, error) {
	if m.Schema == 0 {
		m.Schema = Schema
	}
	if m.Units == "" {
		m.Units = "ns"
	}
	if m.Schema != Schema {
		return nil, fmt.Errorf("probelog: schema %d, this package writes %d", m.Schema, Schema)
	}
	if err := checkNodes(m.Nodes); err != nil {
		return nil, fmt.Errorf("probelog: meta: %w", err)
	}
	js, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("probelog: meta: %w", err)
	}
	hdr := append([]byte(Magic), binary.AppendUvarint(nil, uint64(len(js)))...)
	hdr = append(hdr, js...)
	if _, err := w.Write(hdr); err != nil {
		return nil, fmt.Errorf("probelog: writing header: %w", err)
	}
	return &Writer{w: w, meta: m}, nil
}

// Meta returns the log's meta data as written in the header.
func (w *Writer) Meta() Meta { return w.meta }

// Write appends b as one block with one Write call on the underlying writer.
// A block the format cannot hold (a Src or Dst outside [0, Meta.Nodes), a
// WindowEnd before WindowStart, a negative count, a Slot other than 0 or
// 1, a T3Source beyond estimate.T3Kernel, a payload over MaxPayloadBytes)
// is refused with an error and nothing is written. Once a
// Write of the underlying writer has failed, every later call returns that
// error: the log may end in a torn block and must not be appended to.
func (w *Writer) Write(b *Block) error {
	if w.err != nil {
		return w.err
	}
	if err := checkBlock(b, w.meta.Nodes); err != nil {
		return fmt.Errorf("probelog: block %d→%d round %d: %w", b.Src, b.Dst, b.RoundID, err)
	}
	// Encode the payload after room for the longest length prefix, then put
	// the prefix right before it, so that the frame is one contiguous slice.
	const room = binary.MaxVarintLen64
	buf := append(w.buf[:0], make([]byte, room)...)
	buf = appendPayload(buf, b)
	n := len(buf) - room
	if n > MaxPayloadBytes {
		w.buf = buf[:0]
		return fmt.Errorf("probelog: block %d→%d round %d: payload of %d bytes exceeds %d",
			b.Src, b.Dst, b.RoundID, n, MaxPayloadBytes)
	}
	buf = binary.LittleEndian.AppendUint32(buf, crc32.Checksum(buf[room:], castagnoli))
	var pre [binary.MaxVarintLen64]byte
	k := binary.PutUvarint(pre[:], uint64(n))
	copy(buf[room-k:], pre[:k])
	w.buf = buf[:0]
	if _, err := w.w.Write(buf[room-k:]); err != nil {
		w.err = fmt.Errorf("probelog: writing block: %w", err)
		return w.err
	}
	return nil
}
