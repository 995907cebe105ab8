package xspace

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/chronosync/chronosync/trace/xplanepb"
)

// ScanPlanes reads an XSpace from r one plane at a time, so that a
// combined trace far larger than memory can be exported: it calls plane
// for each XSpace.planes entry in file order and hostname for each
// XSpace.hostnames entry (nil: skipped), and skips XSpace's other fields.
// A plane larger than maxPlane bytes (0: no bound) is an error, as is data
// that is not an XSpace's wire encoding (a [*CorruptError], its Offset
// counted from the start of r). Memory: one plane's bytes and its decoded
// message.
func ScanPlanes(r io.Reader, maxPlane int64, plane func(*xplanepb.XPlane) error, hostname func(string) error) error {
	br := bufio.NewReaderSize(r, 1<<16)
	var off int64
	var buf []byte
	for index := 0; ; {
		start := off
		tag, n, err := readVarint(br)
		off += int64(n)
		if err == io.EOF && n == 0 {
			return nil
		}
		if err != nil {
			return &CorruptError{Offset: start, Reason: "truncated field tag"}
		}
		num, typ := protowire.DecodeTag(tag)
		if num <= 0 || num > protowire.MaxValidNumber {
			return &CorruptError{Offset: start, Reason: fmt.Sprintf("invalid field number %d", num)}
		}
		if typ != protowire.BytesType {
			if (num == FieldSpacePlanes || num == FieldSpaceHostnames) || !skipScalar(br, typ, &off) {
				return &CorruptError{Offset: start, Reason: fmt.Sprintf("field %d has wire type %d", num, typ)}
			}
			continue
		}
		size, n, err := readVarint(br)
		off += int64(n)
		if err != nil {
			return &CorruptError{Offset: start, Reason: "truncated length"}
		}
		if num == FieldSpacePlanes && maxPlane > 0 && size > uint64(maxPlane) {
			return fmt.Errorf("plane %d at byte %d is %d bytes, more than the %d a plane may have", index, start, size, maxPlane)
		}
		if size > 1<<40 {
			return &CorruptError{Offset: start, Reason: "length out of range"}
		}
		if num != FieldSpacePlanes && (num != FieldSpaceHostnames || hostname == nil) {
			got, err := br.Discard(int(size))
			off += int64(got)
			if err != nil {
				return &CorruptError{Offset: off, Reason: "truncated"}
			}
			continue
		}
		if uint64(cap(buf)) < size {
			buf = make([]byte, size)
		}
		buf = buf[:size]
		got, err := io.ReadFull(br, buf)
		off += int64(got)
		if err != nil {
			return &CorruptError{Offset: off, Reason: "truncated"}
		}
		if num == FieldSpaceHostnames {
			if err := hostname(string(buf)); err != nil {
				return err
			}
			continue
		}
		p := &xplanepb.XPlane{}
		if err := Unmarshal(buf, p); err != nil {
			var ce *CorruptError
			if errors.As(err, &ce) && ce.Offset >= 0 {
				ce.Offset += off - int64(size)
				ce.Field = fmt.Sprintf("planes[%d]", index) + dotted(ce.Field)
			}
			return err
		}
		index++
		if err := plane(p); err != nil {
			return err
		}
	}
}

// dotted prefixes a non-empty field path with a dot.
func dotted(s string) string {
	if s == "" {
		return ""
	}
	return "." + s
}

// readVarint reads one varint; n is the bytes read.
func readVarint(br *bufio.Reader) (v uint64, n int, err error) {
	for shift := uint(0); shift < 64; shift += 7 {
		b, err := br.ReadByte()
		if err != nil {
			if err == io.EOF && n > 0 {
				err = io.ErrUnexpectedEOF
			}
			return 0, n, err
		}
		n++
		v |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return v, n, nil
		}
	}
	return 0, n, errors.New("varint overflows 64 bits")
}

// skipScalar skips a varint, fixed32 or fixed64 value; false for any other
// wire type or a truncated value.
func skipScalar(br *bufio.Reader, typ protowire.Type, off *int64) bool {
	switch typ {
	case protowire.VarintType:
		_, n, err := readVarint(br)
		*off += int64(n)
		return err == nil
	case protowire.Fixed32Type, protowire.Fixed64Type:
		size := 4
		if typ == protowire.Fixed64Type {
			size = 8
		}
		got, err := br.Discard(size)
		*off += int64(got)
		return err == nil
	}
	return false
}
