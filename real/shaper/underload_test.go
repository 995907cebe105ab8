//go:build linux

package shaper

import (
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/chronosync/chronosync/model/netem"
)

// hogEnv makes the test binary a CPU hog (see TestMain and startHogs).
const hogEnv = "SHAPER_TEST_CPU_HOG"

// startHogs starts n child processes that each spin on one CPU until the
// test ends: the test binary itself, which spins instead of testing when
// hogEnv is set. Processes rather than goroutines, so that the load
// competes for the CPUs, as another program on the machine does, and not
// for this process's GOMAXPROCS Ps.
func startHogs(t testing.TB, n int) {
	t.Helper()
	h := startHogPIDs(t, n)
	t.Cleanup(h.kill)
}

// hogProcs are CPU hog processes (startHogPIDs).
type hogProcs struct{ cmds []*exec.Cmd }

// startHogPIDs starts n CPU hog processes, as startHogs does, which run
// until kill is called.
func startHogPIDs(t testing.TB, n int) *hogProcs {
	t.Helper()
	h := &hogProcs{}
	for range n {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), hogEnv+"=1", "GOMAXPROCS=1")
		if err := cmd.Start(); err != nil {
			h.kill()
			t.Fatal(err)
		}
		h.cmds = append(h.cmds, cmd)
	}
	return h
}

// kill kills the hogs by their PIDs and waits for them; again, it does
// nothing.
func (h *hogProcs) kill() {
	for _, cmd := range h.cmds {
		cmd.Process.Kill()
		cmd.Wait()
	}
	h.cmds = nil
}

// hog spins forever; TestMain calls it in a hog child.
func hog() {
	x := 0
	for {
		x++
	}
}

// udpDatagramSeq returns the sequence number of a datagram of
// TestMeasuredUnderLoad in frame, one for UDP port port.
func udpDatagramSeq(frame []byte, port uint16) (uint64, bool) {
	if len(frame) < ethHeader+20 || binary.BigEndian.Uint16(frame[12:14]) != 0x0800 {
		return 0, false
	}
	ip := frame[ethHeader:]
	ihl := int(ip[0]&0x0f) * 4
	if ip[9] != unix.IPPROTO_UDP || len(ip) < ihl+8+8 {
		return 0, false
	}
	udp := ip[ihl:]
	if binary.BigEndian.Uint16(udp[2:4]) != port {
		return 0, false
	}
	return binary.BigEndian.Uint64(udp[8:]), true
}

// rxStamp returns the SO_TIMESTAMPNS stamp in oob, in ns since the epoch,
// or 0.
func rxStamp(oob []byte) int64 {
	for len(oob) > 0 {
		h, data, rest, err := unix.ParseOneSocketControlMessage(oob)
		if err != nil {
			return 0
		}
		if h.Level == unix.SOL_SOCKET && h.Type == unix.SO_TIMESTAMPNS && len(data) >= 16 {
			return int64(binary.NativeEndian.Uint64(data[0:8]))*1e9 + int64(binary.NativeEndian.Uint64(data[8:16]))
		}
		oob = rest
	}
	return 0
}

// pct returns the p-th percentile of sorted x.
func pct(x []int64, p int) time.Duration {
	if len(x) == 0 {
		return 0
	}
	return time.Duration(x[min(len(x)-1, len(x)*p/100)])
}

// TestMeasuredUnderLoad measures a 50 µs ± 5 µs link (node 0 -> node 1)
// while every CPU of the machine is busy with a hog process ("loaded")
// and, as a reference, while it is not ("quiet"), datagram by datagram:
// the one-way delay is the receiving socket's kernel receive stamp
// (SO_TIMESTAMPNS) minus a clock read just before the send, and the
// modelled delay is the release the link model gave that frame minus its
// arrival stamp, read from the shaper through a test hook on its writes.
// Measured - modelled thus includes the sender's and the receiver's
// kernel paths (about 10 µs at the median here) besides the shaper's own
// lateness, which is logged too.
//
// When loaded, the 99th percentile of |measured - modelled| over 2000
// datagrams must stay within 100 µs: with its thread under SCHED_FIFO the
// shaper gave 26 to 65 µs there in 9 runs on the 2-core VM this was
// written on, with other tests running beside, and without SCHED_FIFO 5
// to 170 ms (so the loaded case is skipped when the process may not use
// SCHED_FIFO). See measure for the retries. The quiet case is only
// logged: an idle vCPU halts and the host takes tens of µs to ms to wake
// it for a frame, so its p99 ranged from 24 µs to 4 ms over the same
// runs, more a measure of the machine than of the shaper.
func TestMeasuredUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("timing test")
	}
	for _, tc := range []struct {
		name  string
		hogs  int
		bound time.Duration
	}{
		{"quiet", 0, 0}, // logged only
		{"loaded", runtime.NumCPU(), 100 * time.Microsecond},
	} {
		t.Run(tc.name, func(t *testing.T) { measureUnderLoad(t, tc.hogs, tc.bound) })
	}
}

// measureUnderLoad is TestMeasuredUnderLoad with hogs CPU hogs and bound
// on the 99th percentile (0: none, the figures are only logged).
func measureUnderLoad(t *testing.T, hogs int, bound time.Duration) {
	const delay, jitter = 50 * time.Microsecond, 5 * time.Microsecond
	type release struct{ modelled, late int64 }
	var mu sync.Mutex
	releases := map[uint64]release{}
	var dstPort uint16
	lab, s := relayLabWith(t, 2, only(netem.Params{Delay: delay, Jitter: jitter}), func(s *Shaper) {
		s.onWrite = func(it *item, now int64) {
			mu.Lock()
			defer mu.Unlock()
			if seq, ok := udpDatagramSeq(it.frame, dstPort); ok && it.link.from == 0 {
				releases[seq] = release{it.at - it.arrival, now - it.at}
			}
		}
	})
	tx, rx := udpPair(t, lab, 0, 1)
	mu.Lock()
	dstPort = uint16(rx.LocalAddr().(*net.UDPAddr).Port)
	mu.Unlock()
	rc, err := rx.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1) }); err != nil || serr != nil {
		t.Fatal(err, serr)
	}
	warmUp(t, tx, rx) // the shaper has started: Info is final
	if !s.Info().RealTime && hogs > 0 {
		t.Skip("the shaper's thread is not under SCHED_FIFO (needs CAP_SYS_NICE): no bound holds under load")
	}
	startHogs(t, hogs)
	t.Logf("%d CPU hogs; shaper info %+v", hogs, s.Info())
	measure(t, nil, func(attempt int) (bad []string) {
		const n = 2000
		mu.Lock()
		clear(releases)
		mu.Unlock()
		sent, recv := make([]int64, n), make([]int64, n)
		done := make(chan struct{})
		go func() {
			defer close(done)
			buf, oob := make([]byte, 2048), make([]byte, 512)
			for {
				rx.SetReadDeadline(time.Now().Add(time.Second))
				k, oobn, _, _, err := rx.ReadMsgUDP(buf, oob)
				if err != nil {
					return
				}
				if i := binary.BigEndian.Uint64(buf); k == 64 && i < n {
					recv[i] = rxStamp(oob[:oobn])
				}
			}
		}()
		msg := make([]byte, 64)
		for i := range n {
			binary.BigEndian.PutUint64(msg, uint64(i))
			sent[i] = time.Now().UnixNano()
			if _, err := tx.Write(msg); err != nil {
				t.Fatal(err)
			}
			time.Sleep(500 * time.Microsecond)
		}
		<-done
		mu.Lock()
		defer mu.Unlock()
		var errs, late, oneWay []int64
		missing := 0
		for i := range n {
			r, ok := releases[uint64(i)]
			if recv[i] == 0 || !ok {
				missing++
				continue
			}
			d := recv[i] - sent[i]
			oneWay = append(oneWay, d)
			e := d - r.modelled
			errs = append(errs, max(e, -e))
			late = append(late, r.late)
		}
		slices.Sort(errs)
		slices.Sort(late)
		slices.Sort(oneWay)
		if len(errs) < n*99/100 {
			return []string{fmt.Sprintf("%d of %d datagrams matched (stamped, released and received)", len(errs), n)}
		}
		t.Logf("attempt %d: %d datagrams: |measured - modelled| p50 %v p99 %v max %v; one-way delay p50 %v p99 %v; shaper lateness p50 %v p99 %v max %v",
			attempt, len(errs), pct(errs, 50), pct(errs, 99), pct(errs, 100), pct(oneWay, 50), pct(oneWay, 99), pct(late, 50), pct(late, 99), pct(late, 100))
		t.Logf("shaper info %+v", s.Info())
		if p99 := pct(errs, 99); bound > 0 && p99 > bound {
			bad = append(bad, fmt.Sprintf("p99 |measured - modelled| delay %v above %v", p99, bound))
		}
		return bad
	})
}
