package combine

import (
	"bufio"
	"io"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/chronosync/chronosync/infile"
	"github.com/chronosync/chronosync/trace/xspace"
)

// jobHasGPU reports whether any input has a GPU plane, before the first
// node is combined: then xprof shows the combined trace's GPU planes and
// none of its TPU planes, and a later node's /host:CPU may become a GPU
// plane (see rename.go). A Kineto input counts as one with a GPU plane
// (its kernels and memcpys become /device:GPU:<n> planes; one without
// any is a CPU-only job, which renders the same either way). An XSpace
// input's plane names are read at the wire level, seeking past each
// plane's body: a few reads per plane, however large the file. An input
// that cannot be read or parsed counts as none: combining it reports
// what is wrong with it.
func jobHasGPU(inputs []Input) bool {
	for _, in := range inputs {
		if IsKineto(in.Trace) {
			return true
		}
		found := false
		_ = scanPlaneNames(in.Trace, func(name string) bool {
			found = strings.HasPrefix(name, gpuPrefix)
			return !found
		})
		if found {
			return true
		}
	}
	return false
}

// planeNameHead is how much of a plane scanPlaneNames reads to find its
// name: encoders write id (1) and name (2) before lines and metadata.
const planeNameHead = 4096

// scanPlaneNames calls name with the name of each plane of the XSpace at
// path, in file order, until it returns false. It reads each plane's
// first bytes and seeks past the rest; a plane whose name is not among
// them (an encoder that writes it after its lines) is read whole.
func scanPlaneNames(path string, name func(string) bool) error {
	f, err := infile.Open(path, infile.XSpace)
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, planeNameHead)
	var off int64 // br's position in the file
	for {
		tag, err := readUvarint(br, &off)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		num, typ := protowire.DecodeTag(tag)
		var size uint64
		switch typ {
		case protowire.VarintType:
			if _, err := readUvarint(br, &off); err != nil {
				return err
			}
			continue
		case protowire.Fixed32Type:
			size = 4
		case protowire.Fixed64Type:
			size = 8
		case protowire.BytesType:
			if size, err = readUvarint(br, &off); err != nil {
				return err
			}
		default:
			return xspace.ErrWire
		}
		if size > uint64(f.Size()) {
			return xspace.ErrWire
		}
		end := off + int64(size)
		if num == xspace.FieldSpacePlanes && typ == protowire.BytesType {
			head, err := br.Peek(int(min(size, planeNameHead)))
			if err != nil {
				return err
			}
			n, ok := planeName(head)
			if !ok && size > planeNameHead {
				whole := make([]byte, size)
				if _, err := f.Seek(off, io.SeekStart); err != nil {
					return err
				}
				if _, err := io.ReadFull(f, whole); err != nil {
					return err
				}
				br.Reset(f)
				off = end
				if n, ok = planeName(whole); ok && !name(n) {
					return nil
				}
				continue
			}
			if ok && !name(n) {
				return nil
			}
		}
		if end-off <= int64(br.Buffered()) {
			if _, err := br.Discard(int(end - off)); err != nil {
				return err
			}
		} else {
			if _, err := f.Seek(end, io.SeekStart); err != nil {
				return err
			}
			br.Reset(f)
		}
		off = end
	}
}

// planeName returns the name (field 2) among an XPlane's encoded fields
// b, which may be cut short; false when b has none before it ends.
func planeName(b []byte) (string, bool) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return "", false
		}
		b = b[n:]
		if num == xspace.FieldPlaneName && typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return "", false
			}
			return string(v), true
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return "", false
		}
		b = b[n:]
	}
	return "", false
}

// readUvarint reads one varint from br, counting its bytes into *off.
func readUvarint(br *bufio.Reader, off *int64) (uint64, error) {
	var v uint64
	for i := 0; i < 10; i++ {
		c, err := br.ReadByte()
		if err != nil {
			if i > 0 && err == io.EOF {
				return 0, io.ErrUnexpectedEOF
			}
			return 0, err
		}
		*off++
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, nil
		}
	}
	return 0, xspace.ErrWire
}
