package xspace

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/chronosync/chronosync/infile"
	"github.com/chronosync/chronosync/trace/snapshotpb"
	"github.com/chronosync/chronosync/trace/xplanepb"
)

// ErrCorrupt is wrapped by every error that reports input which is not a
// valid wire encoding of the expected message.
var ErrCorrupt = errors.New("corrupt protobuf")

// CorruptError says where the wire data of a message stops parsing. It
// wraps [ErrCorrupt].
type CorruptError struct {
	// Offset is the byte offset, from the start of the input, where the
	// data breaks: where the data ends when it is truncated, otherwise the
	// start of the field (or of the invalid byte of a string) that does not
	// parse. It is -1 when the place could not be found.
	Offset int64
	// Field is the path of the innermost message or field in which the
	// data breaks, such as "planes[2].lines[0]" (an index counts the
	// occurrences of a repeated or map field so far; a map entry's value
	// is ".value"); empty for the top-level message.
	Field string
	// Reason says what is wrong, such as "truncated".
	Reason string
}

// Error returns, for example,
// "corrupt protobuf at byte 1234 (in planes[2].lines[0]): truncated".
func (e *CorruptError) Error() string {
	switch {
	case e.Offset < 0:
		return fmt.Sprintf("%v: %s", ErrCorrupt, e.Reason)
	case e.Field == "":
		return fmt.Sprintf("%v at byte %d: %s", ErrCorrupt, e.Offset, e.Reason)
	default:
		return fmt.Sprintf("%v at byte %d (in %s): %s", ErrCorrupt, e.Offset, e.Field, e.Reason)
	}
}

// Unwrap returns [ErrCorrupt].
func (e *CorruptError) Unwrap() error { return ErrCorrupt }

// Read reads the XSpace trace at path (a *.xplane.pb file). An empty file is
// an empty XSpace. Corrupt data gives a [*CorruptError] that names path and
// the byte offset; a missing file gives the os error.
func Read(path string) (*xplanepb.XSpace, error) {
	s := &xplanepb.XSpace{}
	if err := readInto(path, infile.XSpace, s); err != nil {
		return nil, err
	}
	return s, nil
}

// ReadCounted is [Read] that also returns the trace's counts: the file's
// size, its planes and its events (see [Counts.Empty] and [Mismatch]).
func ReadCounted(path string) (*xplanepb.XSpace, Counts, error) {
	b, err := infile.ReadFile(path, infile.XSpace)
	if err != nil {
		return nil, Counts{}, fmt.Errorf("read %s: %w", path, err)
	}
	s := &xplanepb.XSpace{}
	if err := Unmarshal(b, s); err != nil {
		return nil, Counts{}, fmt.Errorf("read %s: %w", path, err)
	}
	c := CountOf(s)
	c.Bytes = int64(len(b))
	return s, c, nil
}

// ReadSnapshots reads the clock snapshots at path, with the errors of
// [Read].
func ReadSnapshots(path string) (*snapshotpb.SnapshotPairs, error) {
	s := &snapshotpb.SnapshotPairs{}
	if err := readInto(path, infile.Snapshots, s); err != nil {
		return nil, err
	}
	return s, nil
}

func readInto(path string, k infile.Kind, m proto.Message) error {
	b, err := infile.ReadFile(path, k)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if err := Unmarshal(b, m); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	return nil
}

// Unmarshal parses b into m with proto.Unmarshal. When b does not parse, it
// walks b's wire format along m's schema to find where, and returns a
// [*CorruptError].
func Unmarshal(b []byte, m proto.Message) error {
	err := proto.Unmarshal(b, m)
	if err == nil {
		return nil
	}
	if ce := locate(b, m.ProtoReflect().Descriptor()); ce != nil {
		return ce
	}
	return &CorruptError{Offset: -1, Reason: err.Error()}
}
