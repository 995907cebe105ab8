package tsudp

import (
	"encoding/binary"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// cmsg builds one control message as the kernel lays it out.
func cmsg(level, typ int32, data []byte) []byte {
	b := make([]byte, unix.CmsgSpace(len(data)))
	h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
	h.Level, h.Type = level, typ
	h.SetLen(unix.CmsgLen(len(data)))
	copy(b[unix.CmsgLen(0):], data)
	return b
}

// timestamping builds a struct scm_timestamping with timespecs of size bytes
// whose ts[0] is sec.nsec and ts[2] (the hardware stamp) is 7.7.
func timestamping(size int, sec, nsec int64) []byte {
	b := make([]byte, 3*size)
	put := func(i int, s, ns int64) {
		if size == 8 {
			binary.NativeEndian.PutUint32(b[i*size:], uint32(s))
			binary.NativeEndian.PutUint32(b[i*size+4:], uint32(ns))
			return
		}
		binary.NativeEndian.PutUint64(b[i*size:], uint64(s))
		binary.NativeEndian.PutUint64(b[i*size+8:], uint64(ns))
	}
	put(0, sec, nsec)
	put(2, 7, 7)
	return b
}

// extErr builds a struct sock_extended_err followed by an offender address.
func extErr(errno uint32, origin uint8, info, data uint32) []byte {
	b := make([]byte, sockExtendedErrSize+unix.SizeofSockaddrInet4)
	binary.NativeEndian.PutUint32(b, errno)
	b[4] = origin
	binary.NativeEndian.PutUint32(b[8:], info)
	binary.NativeEndian.PutUint32(b[12:], data)
	return b
}

func join(msgs ...[]byte) []byte {
	var b []byte
	for _, m := range msgs {
		b = append(b, m...)
	}
	return b
}

func TestParseCmsgs(t *testing.T) {
	const sec, nsec = 1_700_000_000, 123_456_789
	const ns = sec*1e9 + nsec
	tsOld := cmsg(unix.SOL_SOCKET, unix.SO_TIMESTAMPING_OLD, timestamping(oldTimespecSize, sec, nsec))
	tsNew := cmsg(unix.SOL_SOCKET, unix.SO_TIMESTAMPING_NEW, timestamping(newTimespecSize, sec, nsec))
	txErr := cmsg(unix.SOL_IP, unix.IP_RECVERR, extErr(uint32(unix.ENOMSG), unix.SO_EE_ORIGIN_TIMESTAMPING, unix.SCM_TSTAMP_SND, 42))
	txErr6 := cmsg(unix.SOL_IPV6, unix.IPV6_RECVERR, extErr(uint32(unix.ENOMSG), unix.SO_EE_ORIGIN_TIMESTAMPING, unix.SCM_TSTAMP_SND, 43))
	unknown := cmsg(unix.SOL_IP, unix.IP_TOS, []byte{0x10})
	tests := []struct {
		name    string
		oob     []byte
		want    cmsgs
		wantErr bool
	}{
		{name: "empty", oob: nil},
		{name: "rx stamp", oob: tsOld, want: cmsgs{stamp: ns, hasStamp: true}},
		{name: "rx stamp new layout", oob: tsNew, want: cmsgs{stamp: ns, hasStamp: true}},
		{name: "tx stamp ipv4", oob: join(tsOld, txErr), want: cmsgs{stamp: ns, hasStamp: true, txID: 42, hasTxID: true}},
		{name: "tx stamp ipv6, recverr first", oob: join(txErr6, tsOld), want: cmsgs{stamp: ns, hasStamp: true, txID: 43, hasTxID: true}},
		{name: "unknown ignored", oob: join(unknown, tsOld, unknown), want: cmsgs{stamp: ns, hasStamp: true}},
		{name: "only unknown", oob: unknown},
		{name: "zero software stamp is none", oob: cmsg(unix.SOL_SOCKET, unix.SO_TIMESTAMPING_OLD, timestamping(oldTimespecSize, 0, 0))},
		{name: "ICMP error is no tx stamp", oob: cmsg(unix.SOL_IP, unix.IP_RECVERR, extErr(uint32(unix.ECONNREFUSED), unix.SO_EE_ORIGIN_ICMP, 0, 9))},
		{name: "ack stamp is no tx stamp", oob: cmsg(unix.SOL_IP, unix.IP_RECVERR, extErr(uint32(unix.ENOMSG), unix.SO_EE_ORIGIN_TIMESTAMPING, unix.SCM_TSTAMP_ACK, 9))},
		{name: "shorter than a header: nothing to read", oob: tsOld[:unix.CmsgLen(0)-1]},
		{name: "truncated message", oob: tsOld[:unix.CmsgLen(0)+8], wantErr: true},
		{name: "short timestamping payload", oob: cmsg(unix.SOL_SOCKET, unix.SO_TIMESTAMPING_OLD, make([]byte, oldTimespecSize)), wantErr: true},
		{name: "short extended error", oob: cmsg(unix.SOL_IP, unix.IP_RECVERR, make([]byte, 8)), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseCmsgs(tt.oob)
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseCmsgs: err = %v, want error %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("parseCmsgs = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestSourceString(t *testing.T) {
	for s, want := range map[Source]string{SourceKernel: "kernel", SourceUser: "user", 0: "Source(0)"} {
		if got := s.String(); got != want {
			t.Errorf("Source(%d).String() = %q, want %q", uint8(s), got, want)
		}
	}
}
