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

	"github.com/chronosync/chronosync/infile"
)

// Reader reads the blocks of a probe log in order. It is not safe for
// concurrent use.
type Reader struct {
	br    *bufio.Reader
	name  string // leads every error: the file's path, or "probelog"
	meta  Meta
	off   int64 // bytes consumed
	good  int64 // end of the header or of the last block returned
	block int   // blocks returned: the index of the next
	buf   []byte
	err   error // sticky
}

// errVarint marks a varint longer than 64 bits.
var errVarint = errors.New("varint overflows 64 bits")

// NewReader reads and checks the header of a probe log. Input that does not
// start with Magic gives an error wrapping ErrNotProbeLog; a header cut short
// ErrTruncated; a bad header ErrCorrupt (as does unknown JSON, a schema
// other than Schema and SchemaV1, or a node count outside [MinNodes,
// MaxNodes]). A log of SchemaV1 is read with every probe's T3Source
// T3Unrecorded. Its errors begin "probelog: ".
func NewReader(r io.Reader) (*Reader, error) {
	return newReader(r, "probelog")
}

// ReadFile reads the whole probe log at path: its blocks in order and its
// meta data. Its errors begin with path instead of "probelog" and
// otherwise read as the Reader's; with one it returns the blocks before
// the one at fault.
func ReadFile(path string) ([]Block, Meta, error) {
	f, err := infile.Open(path, infile.ProbeLog)
	if err != nil {
		return nil, Meta{}, fmt.Errorf("probelog: %w", err)
	}
	defer f.Close()
	r, err := newReader(f, path)
	if err != nil {
		return nil, Meta{}, err
	}
	var out []Block
	for {
		b, err := r.Next()
		if err == io.EOF {
			return out, r.Meta(), nil
		}
		if err != nil {
			return out, r.Meta(), err
		}
		out = append(out, *b)
	}
}

// newReader is NewReader with name leading every error.
func newReader(r io.Reader, name string) (*Reader, error) {
	rd := &Reader{br: bufio.NewReaderSize(r, 64<<10), name: name}
	magic := make([]byte, len(Magic))
	n, err := io.ReadFull(rd.br, magic)
	rd.off = int64(n)
	switch {
	case string(magic[:n]) != Magic[:n]:
		return nil, fmt.Errorf("%s: %w: the input does not start with %q", name, ErrNotProbeLog, Magic)
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return nil, fmt.Errorf("%s: header at byte 0: %w: the input ends after %d bytes", name, ErrTruncated, n)
	case err != nil:
		return nil, fmt.Errorf("%s: reading header: %w", name, err)
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
		return nil, fmt.Errorf("%s: header at byte 0: %w: meta: %v", name, ErrCorrupt, err)
	}
	if m := rd.meta; m.Schema != Schema && m.Schema != SchemaV1 {
		return nil, fmt.Errorf("%s: header at byte 0: %w: schema %d (this package reads schemas %d and %d)",
			name, ErrCorrupt, m.Schema, SchemaV1, Schema)
	}
	if err := checkNodes(rd.meta.Nodes); err != nil {
		return nil, fmt.Errorf("%s: header at byte 0: %w: %v", name, ErrCorrupt, err)
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
// block's index (from 0) and byte offset, and an impossible value its
// field. Errors are sticky. Every block and its Probes are
// newly allocated: the caller may keep them.
func (r *Reader) Next() (*Block, error) {
	if r.err != nil {
		return nil, r.err
	}
	start := r.off
	where := fmt.Sprintf("block %d", r.block)
	payload, err := r.frame(MaxPayloadBytes, 4, where)
	if err == nil {
		sum := binary.LittleEndian.Uint32(payload[len(payload)-4:])
		payload = payload[:len(payload)-4]
		var b *Block
		if crc32.Checksum(payload, castagnoli) != sum {
			err = fmt.Errorf("%s: %s at byte %d: %w: CRC mismatch", r.name, where, start, ErrCorrupt)
		} else if b, err = decodePayload(payload, r.meta.Schema, r.meta.Nodes); err != nil {
			err = fmt.Errorf("%s: %s at byte %d: %w: %v", r.name, where, start, ErrCorrupt, err)
		} else {
			r.good = r.off
			r.block++
			return b, nil
		}
	}
	r.err = err
	return nil, err
}

// frame reads a uvarint length of at most limit, then that many bytes plus
// extra; what names the frame ("header", "block 3"). io.EOF before the
// first byte of a block is returned as is.
func (r *Reader) frame(limit uint64, extra int, what string) ([]byte, error) {
	start := r.off
	n, err := r.uvarint()
	switch {
	case err == io.EOF && what != "header":
		return nil, io.EOF
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return nil, fmt.Errorf("%s: %s at byte %d: %w: the input ends inside its length", r.name, what, start, ErrTruncated)
	case err == errVarint:
		return nil, fmt.Errorf("%s: %s at byte %d: %w: length %v", r.name, what, start, ErrCorrupt, err)
	case err != nil:
		return nil, fmt.Errorf("%s: %s at byte %d: %w", r.name, what, start, err)
	case n > limit:
		return nil, fmt.Errorf("%s: %s at byte %d: %w: length %d exceeds %d", r.name, what, start, ErrCorrupt, n, limit)
	}
	want := int(n) + extra
	got, err := r.read(want)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return nil, fmt.Errorf("%s: %s at byte %d: %w: %d of its %d bytes present",
			r.name, what, start, ErrTruncated, r.off-start, r.off-start-int64(got)+int64(want))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %s at byte %d: %w", r.name, what, start, err)
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
