package combine

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/chronosync/chronosync/trace/xspace"
	"google.golang.org/protobuf/encoding/protowire"
)

// errScanStopped ends a scan whose consumer failed.
var errScanStopped = errors.New("stopped")

// scanAhead calls plane for each plane of the XSpace in r, in order,
// parsed at the wire level (parsePlane, with checks), while a goroutine
// of its own reads and parses the next one: at most two planes' bytes are
// held. It returns plane's error, else the scan's (a panic in the
// goroutine as a *PanicError), once the goroutine has ended; hook (tests)
// is called in the goroutine first.
func scanAhead(r io.Reader, checks *wireChecks, plane func(*wirePlane) error, hook func(string)) error {
	const what = "reading back the combined XSpace for the Perfetto trace"
	planes := make(chan *wirePlane, 1)
	stop := make(chan struct{})
	done := make(chan struct{})
	var scanErr error
	go func() {
		defer close(done)
		defer close(planes)
		defer recoverPanic(&scanErr, func() string { return what })
		if hook != nil {
			hook(what)
		}
		scanErr = scanPlaneBytes(r, func(b []byte) error {
			p, err := parsePlane(b, checks)
			if err != nil {
				return err
			}
			select {
			case planes <- p:
				return nil
			case <-stop:
				return errScanStopped
			}
		})
	}()
	var err error
	for p := range planes {
		if err != nil {
			continue // draining: the scan stops at its next plane
		}
		if err = plane(p); err != nil {
			close(stop)
		}
	}
	<-done
	if err != nil {
		return err
	}
	return scanErr
}

// scanPlaneBytes calls plane with the bytes of each XSpace.planes entry
// of the XSpace in r, in order, each in a buffer of its own, and skips the
// other fields.
func scanPlaneBytes(r io.Reader, plane func([]byte) error) error {
	br := bufio.NewReaderSize(r, 1<<16)
	for {
		tag, err := binary.ReadUvarint(br)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read a field tag: %w", err)
		}
		num, typ := protowire.Number(tag>>3), protowire.Type(tag&7)
		switch typ {
		case protowire.VarintType:
			_, err = binary.ReadUvarint(br)
		case protowire.Fixed64Type:
			_, err = br.Discard(8)
		case protowire.Fixed32Type:
			_, err = br.Discard(4)
		case protowire.BytesType:
			var n uint64
			if n, err = binary.ReadUvarint(br); err != nil {
				break
			}
			if n > 1<<40 {
				return fmt.Errorf("field %d: length %d out of range", num, n)
			}
			if num != xspace.FieldSpacePlanes {
				_, err = br.Discard(int(n))
				break
			}
			b := make([]byte, n)
			if _, err = io.ReadFull(br, b); err != nil {
				break
			}
			if err := plane(b); err != nil {
				return err
			}
		default:
			return fmt.Errorf("field %d: wire type %d", num, typ)
		}
		if err != nil {
			return fmt.Errorf("read field %d: %w", num, err)
		}
	}
}

// stagedPath is the staged file of the output at path.
func (o *outputSet) stagedPath(path string) (string, bool) {
	for _, sf := range o.files {
		if sf.path == path {
			return sf.staged, true
		}
	}
	return "", false
}
