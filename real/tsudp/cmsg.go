package tsudp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// oldTimespecSize is the size of the struct timespec carried by
// SO_TIMESTAMPING_OLD: the platform's own. SO_TIMESTAMPING_NEW always
// carries 64-bit seconds and nanoseconds.
const (
	oldTimespecSize = int(unsafe.Sizeof(unix.Timespec{}))
	newTimespecSize = 16
)

// sockExtendedErrSize is the size of struct sock_extended_err.
const sockExtendedErrSize = int(unsafe.Sizeof(unix.SockExtendedErr{}))

// cmsgs is what a message's control data says about timestamps.
type cmsgs struct {
	stamp    int64 // software timestamp (ts[0]), ns since the epoch
	hasStamp bool
	txID     uint32 // OPT_ID counter of a transmit timestamp
	hasTxID  bool
}

// parseCmsgs reads the SCM_TIMESTAMPING and IP_RECVERR / IPV6_RECVERR
// control messages in oob; other messages are ignored. A zero software
// timestamp (the kernel fills ts[0] only for software stamps) counts as none.
func parseCmsgs(oob []byte) (cmsgs, error) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return cmsgs{}, fmt.Errorf("control messages: %w", err)
	}
	var r cmsgs
	for _, m := range msgs {
		h := m.Header
		switch {
		case h.Level == unix.SOL_SOCKET && h.Type == unix.SO_TIMESTAMPING_OLD:
			r.stamp, r.hasStamp, err = firstTimespec(m.Data, oldTimespecSize)
		case h.Level == unix.SOL_SOCKET && h.Type == unix.SO_TIMESTAMPING_NEW:
			r.stamp, r.hasStamp, err = firstTimespec(m.Data, newTimespecSize)
		case h.Level == unix.SOL_IP && h.Type == unix.IP_RECVERR,
			h.Level == unix.SOL_IPV6 && h.Type == unix.IPV6_RECVERR:
			r.txID, r.hasTxID, err = txCounter(m.Data)
		}
		if err != nil {
			return cmsgs{}, err
		}
	}
	return r, nil
}

// firstTimespec decodes ts[0] of a struct scm_timestamping whose timespecs
// are size bytes long.
func firstTimespec(b []byte, size int) (ns int64, ok bool, err error) {
	if len(b) < 3*size {
		return 0, false, fmt.Errorf("SCM_TIMESTAMPING: %d bytes, want %d", len(b), 3*size)
	}
	var sec, nsec int64
	if size == 8 {
		sec = int64(int32(binary.NativeEndian.Uint32(b)))
		nsec = int64(int32(binary.NativeEndian.Uint32(b[4:])))
	} else {
		sec = int64(binary.NativeEndian.Uint64(b))
		nsec = int64(binary.NativeEndian.Uint64(b[8:]))
	}
	if sec == 0 && nsec == 0 {
		return 0, false, nil
	}
	return sec*1e9 + nsec, true, nil
}

// txCounter reads a struct sock_extended_err and, when it reports a software
// transmit timestamp, returns its OPT_ID counter (ee_data).
func txCounter(b []byte) (id uint32, ok bool, err error) {
	if len(b) < sockExtendedErrSize {
		return 0, false, errors.New("sock_extended_err: truncated")
	}
	errno, origin := binary.NativeEndian.Uint32(b), b[4]
	info, data := binary.NativeEndian.Uint32(b[8:]), binary.NativeEndian.Uint32(b[12:])
	if errno != uint32(unix.ENOMSG) || origin != unix.SO_EE_ORIGIN_TIMESTAMPING || info != unix.SCM_TSTAMP_SND {
		return 0, false, nil
	}
	return data, true, nil
}
