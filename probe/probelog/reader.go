package probelog

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
)

// Reader reads the blocks of a probe log in order. It is not safe for
// concurrent use.
type Reader struct {
	br   *bufio.Reader
	meta Meta
	off  int64 // bytes consumed
	good int64 // end of the header or of the last block returned
	buf  []byte
	err  error // sticky
}

// errVarint marks a varint longer than 64 bits.
var errVarint = errors.New("varint overflows 64 bits")

// NewReader reads and checks the header of a probe log. Input that does not
// start with Magic gives an error wrapping ErrNotProbeLog; a header cut short
// ErrTruncated; a bad header ErrCorrupt (as does unknown JSON or a schema
// other than Schema and SchemaV1). A log of SchemaV1 is read with every
// probe's T3Source T3Unrecorded.
func NewReader(r io.Reader) (*Reader, error) {
	rd := &Reader{br: bufio.NewReaderSize(r, 64<<10)}
	magic := make([]byte, len(Magic))
	n, err := io.ReadFull(rd.br, magic)
	rd.off = int64(n)
	switch {
	case string(magic[:n]) != Magic[:n]:
		return nil, fmt.Errorf("probelog: %w: the input does not start with %q", ErrNotProbeLog, Magic)
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return nil, fmt.Errorf("probelog: header at byte 0: %w: the input ends after %d bytes", ErrTruncated, n)
	case err != nil:
		return nil, fmt.Errorf("probelog: reading header: %w", err)
	}
	js, err := rd.frame(MaxMetaBytes, 0, "header")
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rd.meta); err != nil || dec.More() {
		if err == nil {
			err = errors.New("data after the JSON object")
		}
		return nil, fmt.Errorf("probelog: header at byte 0: %w: meta: %v", ErrCorrupt, err)
	}
	if m := rd.meta; (m.Schema != Schema && m.Schema != SchemaV1) || m.Nodes < 0 {
		return nil, fmt.Errorf("probelog: header at byte 0: %w: schema %d, nodes %d (this package reads schemas %d and %d)",
			ErrCorrupt, m.Schema, m.Nodes, SchemaV1, Schema)
	}
	rd.good = rd.off
	return rd, nil
}

// Meta returns the meta data of the header.
func (r *Reader) Meta() Meta { return r.meta }

// Offset returns the byte offset just past the header or the last block
// Next returned. After an error it is where the bad block starts: the length
// to truncate a torn log to before appending to it again.
func (r *Reader) Offset() int64 { return r.good }

// Next returns the next block, or io.EOF at a clean end of the log. A block
// cut short by the end of the input gives an error wrapping ErrTruncated, a
// CRC mismatch or an impossible value one wrapping ErrCorrupt; both state the
// block's byte offset. Errors are sticky. Every block and its Probes are
// newly allocated: the caller may keep them.
func (r *Reader) Next() (*Block, error) {
	if r.err != nil {
		return nil, r.err
	}
	start := r.off
	payload, err := r.frame(MaxPayloadBytes, 4, "block")
	if err == nil {
		sum := binary.LittleEndian.Uint32(payload[len(payload)-4:])
		payload = payload[:len(payload)-4]
		var b *Block
		if crc32.Checksum(payload, castagnoli) != sum {
			err = fmt.Errorf("probelog: block at byte %d: %w: CRC mismatch", start, ErrCorrupt)
		} else if b, err = decodePayload(payload, r.meta.Schema, r.meta.Nodes); err != nil {
			err = fmt.Errorf("probelog: block at byte %d: %w: %v", start, ErrCorrupt, err)
		} else {
			r.good = r.off
			return b, nil
		}
	}
	r.err = err
	return nil, err
}

// frame reads a uvarint length of at most limit, then that many bytes plus
// extra. io.EOF before the first byte is returned as is.
func (r *Reader) frame(limit uint64, extra int, what string) ([]byte, error) {
	start := r.off
	n, err := r.uvarint()
	switch {
	case err == io.EOF && what == "block":
		return nil, io.EOF
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return nil, fmt.Errorf("probelog: %s at byte %d: %w: the input ends inside its length", what, start, ErrTruncated)
	case err == errVarint:
		return nil, fmt.Errorf("probelog: %s at byte %d: %w: length %v", what, start, ErrCorrupt, err)
	case err != nil:
		return nil, fmt.Errorf("probelog: %s at byte %d: %w", what, start, err)
	case n > limit:
		return nil, fmt.Errorf("probelog: %s at byte %d: %w: length %d exceeds %d", what, start, ErrCorrupt, n, limit)
	}
	want := int(n) + extra
	got, err := r.read(want)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return nil, fmt.Errorf("probelog: %s at byte %d: %w: %d of its %d bytes present",
			what, start, ErrTruncated, r.off-start, r.off-start-int64(got)+int64(want))
	}
	if err != nil {
		return nil, fmt.Errorf("probelog: %s at byte %d: %w", what, start, err)
	}
	return r.buf, nil
}

// uvarint reads a uvarint byte by byte.
func (r *Reader) uvarint() (uint64, error) {
	var b [binary.MaxVarintLen64]byte
	for i := range b {
		c, err := r.br.ReadByte()
		if err != nil {
			if err == io.EOF && i > 0 {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
		r.off++
		b[i] = c
		if c < 0x80 {
			v, n := binary.Uvarint(b[:i+1])
			if n <= 0 {
				return 0, errVarint
			}
			return v, nil
		}
	}
	return 0, errVarint
}

// read reads n bytes into r.buf and returns how many it got. The buffer
// grows at most by doubling what has actually arrived, so that a length
// prefix that lies costs no more memory than the input holds.
func (r *Reader) read(n int) (int, error) {
	r.buf = r.buf[:0]
	for len(r.buf) < n {
		chunk := min(n-len(r.buf), max(len(r.buf), 64<<10))
		have := len(r.buf)
		r.buf = slices.Grow(r.buf, chunk)[:have+chunk]
		m, err := io.ReadFull(r.br, r.buf[have:])
		r.off += int64(m)
		r.buf = r.buf[:have+m]
		if err != nil {
			return len(r.buf), err
		}
	}
	return n, nil
}
