// Package wire frames the round protocol's messages.
//
// A frame is a 4-byte big-endian payload length followed by that many bytes
// of a serialized [syncpb.Envelope]. The simulator's streams already
// preserve message boundaries and carry one frame per message; the real
// backend sends the same frames over TCP, where a [Splitter] cuts the byte
// stream back into frames. Either way [Unmarshal] decodes one whole frame.
//
// Every frame has a cap on its payload (DefaultMaxFrame unless the caller
// gives one), checked from the length prefix before anything is allocated
// for the payload, so a peer cannot make a reader buffer more than the cap.
// Errors wrap [ErrOversize] or [ErrMalformed] (test with errors.Is) and say
// what was wrong.
package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"google.golang.org/protobuf/proto"

	"github.com/chronosync/chronosync/rounds/syncpb"
)

// DefaultMaxFrame is the payload cap, in bytes, used when a function is
// given a cap <= 0. The length prefix is not counted.
const DefaultMaxFrame = 1 << 20

// PrefixLen is the size in bytes of a frame's big-endian length prefix.
const PrefixLen = 4

// ErrOversize is wrapped by the errors for a frame whose payload is larger
// than the cap, whether the length prefix declares it (decoding) or the
// message serializes to it (encoding).
var ErrOversize = errors.New("wire: frame over the size cap")

// ErrMalformed is wrapped by the errors for a frame that cannot be decoded:
// a cut length prefix, a length that does not match the bytes, a payload
// that is not a valid Envelope, or an Envelope without a body. Encoding a
// nil or empty Envelope, or one that protobuf cannot serialize, wraps it too.
var ErrMalformed = errors.New("wire: malformed frame")

// ErrUnknownBody is wrapped, beside ErrMalformed, by the error for a whole,
// well-formed frame whose Envelope carries only a body this version does
// not know: a message of a newer peer. A reader may skip such a frame
// (the stream is still in step) where it would close the stream on any
// other malformed one.
var ErrUnknownBody = errors.New("wire: envelope body unknown to this version")

// frameError is the error the package returns: its text says what was
// wrong and it unwraps to its sentinel and, when there is one, its cause.
type frameError struct {
	sentinel error
	msg      string
	cause    error
	unknown  bool // the frame's body is unknown: it wraps ErrUnknownBody too
}

func (e *frameError) Error() string {
	if e.cause != nil {
		return e.msg + ": " + e.cause.Error()
	}
	return e.msg
}

func (e *frameError) Unwrap() []error {
	errs := []error{e.sentinel}
	if e.unknown {
		errs = append(errs, ErrUnknownBody)
	}
	if e.cause != nil {
		errs = append(errs, e.cause)
	}
	return errs
}

func errorf(sentinel, cause error, format string, args ...any) error {
	return &frameError{sentinel: sentinel, msg: fmt.Sprintf(format, args...), cause: cause}
}

// limit turns a caller's cap into the effective one: DefaultMaxFrame for
// max <= 0, and no more than a 4-byte prefix can declare.
func limit(max int) int {
	if max <= 0 {
		return DefaultMaxFrame
	}
	if uint64(max) > math.MaxUint32 {
		return math.MaxUint32
	}
	return max
}

// Marshal returns env as one frame. It fails with ErrOversize when the
// payload would be larger than max bytes (max <= 0 means DefaultMaxFrame)
// and with ErrMalformed when env is nil or has no body, since Unmarshal
// would refuse such a frame.
func Marshal(env *syncpb.Envelope, max int) ([]byte, error) {
	return AppendFrame(nil, env, max)
}

// AppendFrame appends env as one frame to dst and returns the extended
// slice; on error it returns dst unchanged. It checks what Marshal checks;
// the size is computed first, so an oversize message is refused without
// being serialized. Reusing dst across calls makes framing allocation-free
// once dst is large enough.
func AppendFrame(dst []byte, env *syncpb.Envelope, max int) ([]byte, error) {
	max = limit(max)
	if env.GetBody() == nil {
		return dst, errorf(ErrMalformed, nil, "wire: cannot frame an envelope with no body")
	}
	size := proto.Size(env)
	if size > max {
		return dst, errorf(ErrOversize, nil, "wire: %s envelope is %d bytes, cap %d", Kind(env), size, max)
	}
	start := len(dst)
	out := slices.Grow(dst, PrefixLen+size)
	out = binary.BigEndian.AppendUint32(out, uint32(size))
	// proto.Size above cached the sizes of env and its submessages.
	out, err := proto.MarshalOptions{UseCachedSize: true}.MarshalAppend(out, env)
	if err != nil {
		return dst, errorf(ErrMalformed, err, "wire: cannot serialize %s envelope", Kind(env))
	}
	if got := len(out) - start - PrefixLen; got != size {
		// Only a message changed while it was being framed gets here.
		return dst, errorf(ErrMalformed, nil, "wire: %s envelope serialized to %d bytes, sized at %d (modified concurrently?)", Kind(env), got, size)
	}
	return out, nil
}

// Unmarshal decodes one whole frame, length prefix included. It fails with
// ErrMalformed when the prefix is cut, when the prefix does not match the
// number of bytes that follow it, when the payload is not a valid Envelope
// or when the Envelope has no body (which is also what an Envelope from a
// newer peer, carrying only a body this version does not know, looks like:
// that error wraps ErrUnknownBody as well).
// It fails with ErrOversize when the prefix declares more than max bytes
// (max <= 0 means DefaultMaxFrame); that is checked before decoding.
// Unknown fields are kept, so re-marshaling the result loses nothing.
func Unmarshal(frame []byte, max int) (*syncpb.Envelope, error) {
	max = limit(max)
	if len(frame) < PrefixLen {
		return nil, errorf(ErrMalformed, nil, "wire: frame is %d bytes, shorter than its %d-byte length prefix", len(frame), PrefixLen)
	}
	declared := uint64(binary.BigEndian.Uint32(frame))
	if declared > uint64(max) {
		return nil, errorf(ErrOversize, nil, "wire: frame declares %d bytes, cap %d", declared, max)
	}
	payload := frame[PrefixLen:]
	if uint64(len(payload)) != declared {
		return nil, errorf(ErrMalformed, nil, "wire: frame declares %d bytes but carries %d", declared, len(payload))
	}
	env := new(syncpb.Envelope)
	if err := (proto.UnmarshalOptions{}).Unmarshal(payload, env); err != nil {
		return nil, errorf(ErrMalformed, err, "wire: %d-byte payload is not an Envelope", len(payload))
	}
	if env.GetBody() == nil {
		if n := len(env.ProtoReflect().GetUnknown()); n > 0 {
			err := errorf(ErrMalformed, nil, "wire: envelope has no known body (%d bytes of unknown fields: a newer peer?)", n)
			err.(*frameError).unknown = true
			return nil, err
		}
		return nil, errorf(ErrMalformed, nil, "wire: envelope has no body (%d-byte payload)", len(payload))
	}
	return env, nil
}

// bodyOneof describes the Envelope's body oneof.
var bodyOneof = (*syncpb.Envelope)(nil).ProtoReflect().Descriptor().Oneofs().ByName("body")

// Kind names the body env carries, for logs and errors: the body's field
// name in sync.proto ("hello", "round_start", "round_end", "window",
// "heartbeat", "global", "round_result"), or "empty" when env is nil or
// has no body.
func Kind(env *syncpb.Envelope) string {
	if env == nil {
		return "empty"
	}
	fd := env.ProtoReflect().WhichOneof(bodyOneof)
	if fd == nil {
		return "empty"
	}
	return string(fd.Name())
}
