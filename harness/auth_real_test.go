//go:build linux

package harness

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/chronosync/chronosync/analysis/groundtruth"
	"github.com/chronosync/chronosync/auth"
	"github.com/chronosync/chronosync/ci/needs"
	"github.com/chronosync/chronosync/probe"
	"github.com/chronosync/chronosync/real/netlab"
	"github.com/chronosync/chronosync/rounds"
)

// realAuth is real2-idle, shortened: 6 windows of 1 s.
const realAuth = `name: real-auth
seed: 1
duration: 8s
nodes: 2
clocks:
  nodes:
    - {node: 1, offset: 10ms, drift_ppm: 50}
topology: {kind: full_mesh}
protocol: {kind: sync, mode: rounds, estimator: svm, cadence: 1ms, window: 1s, rounds: 6}
`

// TestRealAuth runs the same scenario on the real backend without a key
// and with one; in the keyed run an attacker in node 1's namespace, on
// its address, sends a probe datagram made without the key, replays a
// probe datagram it captured from node 1, and opens a stream to the
// master and sends a frame with a made-up tag. Each is dropped and
// counted by its reason; every round is still solved, the errors stay
// within their σ (or the run says they do not), and the unkeyed run says
// it is unauthenticated.
func TestRealAuth(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two 8 s real runs")
	}
	needs.Available(t, netlab.Available())
	key, err := auth.NewKey(bytes.Repeat([]byte{7}, auth.MinKeySize))
	if err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		name string
		s    Summary
		log  string
	}
	var runs []outcome
	for _, keyed := range []bool{false, true} {
		name := map[bool]string{false: "unkeyed", true: "keyed"}[keyed]
		dir := filepath.Join(t.TempDir(), name)
		opts := Options{Out: dir, Backend: "real"}
		attacked := make(chan error, 1)
		if keyed {
			opts.Key = key
			opts.attack = func(ctx context.Context, enter func(int, func() error) error, addr func(int) netip.Addr) {
				attacked <- attack(ctx, enter, addr)
			}
		}
		res, err := Run(parse(t, realAuth), opts)
		if err != nil {
			t.Fatal(err)
		}
		if keyed {
			if err := <-attacked; err != nil {
				t.Fatalf("attack: %v", err)
			}
		}
		var out bytes.Buffer
		res.Print(&out)
		t.Logf("%s:\n%s", name, out.String())
		runLog, err := os.ReadFile(filepath.Join(dir, FileLog))
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, outcome{name, res.Summary, string(runLog)})
	}
	for _, r := range runs {
		s := r.s
		if len(s.Sync.Control.Missing) > 0 || s.Sync.Online.Unsolved > 0 {
			t.Errorf("%s: rounds missing %v, %d node windows unsolved; want every round whole", r.name, s.Sync.Control.Missing, s.Sync.Online.Unsolved)
		}
		if c := s.Sync.Calibration; c == nil || c.Within3 < groundtruth.Target && !degradedFor(s, "node-round errors beyond 3 reported σ") {
			t.Errorf("%s: calibration %+v, and the run did not say it fell short", r.name, c)
		}
	}
	unkeyed, keyed := runs[0], runs[1]
	for _, why := range []string{"auth_forged", "auth_replayed", "auth_misdirected"} {
		if k := unkeyed.s.Network.Dropped[why]; k != 0 {
			t.Errorf("unkeyed: dropped %s %d", why, k)
		}
	}
	if d := keyed.s.Network.Dropped; d["auth_forged"] != 2 || d["auth_replayed"] != 1 || d["auth_misdirected"] != 0 {
		t.Errorf("keyed: dropped %v; want auth_forged 2 (a datagram and a frame without the key), auth_replayed 1", d)
	}
	if !keyed.s.Real.Authenticated || unkeyed.s.Real.Authenticated {
		t.Errorf("authenticated: keyed run %v, unkeyed %v", keyed.s.Real.Authenticated, unkeyed.s.Real.Authenticated)
	}
	if !bytes.Contains([]byte(unkeyed.log), []byte("the cluster is unauthenticated")) {
		t.Error("the unkeyed run's log does not say it is unauthenticated")
	}
	if !bytes.Contains([]byte(keyed.log), []byte("datagram dropped: it does not open under the cluster key")) ||
		!bytes.Contains([]byte(keyed.log), []byte("stream frame dropped")) {
		t.Error("the keyed run's log does not name the dropped datagram and frame")
	}
	for _, r := range runs {
		c := r.s.Sync.Calibration
		t.Logf("%s: offset error p50 %.0f ns p99 %.0f ns, %.1f %% within 3σ", r.name, r.s.Sync.Online.OffsetError.P50, r.s.Sync.Online.OffsetError.P99, 100*c.Within3)
	}
}

// attack waits 3 s into the run, then, from node 1's namespace and
// address: captures a probe datagram node 1 sent node 0, sends node 0 a
// probe datagram made without the key and the captured one again, and opens a
// stream to node 0's control port and sends a frame with a made-up tag.
func attack(ctx context.Context, enter func(int, func() error) error, addr func(int) netip.Addr) error {
	select {
	case <-ctx.Done():
		return errors.New("the run ended before the attack")
	case <-time.After(3 * time.Second):
	}
	from, to := addr(1), addr(0)
	var udp *net.UDPConn
	var capture int
	var stream net.Conn
	err := enter(1, func() error {
		var err error
		if udp, err = net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(from, 0))); err != nil {
			return err
		}
		if capture, err = unix.Socket(unix.AF_PACKET, unix.SOCK_DGRAM, int(htons(unix.ETH_P_ALL))); err != nil {
			return err
		}
		d := net.Dialer{LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(from, 0)), Timeout: 2 * time.Second}
		stream, err = d.Dial("tcp", netip.AddrPortFrom(to, rounds.Port).String())
		return err
	})
	if udp != nil {
		defer udp.Close()
	}
	if capture > 0 {
		defer unix.Close(capture)
	}
	if stream != nil {
		defer stream.Close()
	}
	if err != nil {
		return err
	}
	// Capture first: the packet socket would see the keyless datagram
	// below too.
	genuine, err := captureUDP(capture, from, to, probe.Port)
	if err != nil {
		return err
	}
	probeAddr := netip.AddrPortFrom(to, probe.Port)
	if _, err := udp.WriteToUDPAddrPort(make([]byte, 48), probeAddr); err != nil {
		return err
	}
	if _, err := udp.WriteToUDPAddrPort(genuine, probeAddr); err != nil {
		return err
	}
	nonce := make([]byte, 16)
	if _, err := io.ReadFull(stream, nonce); err != nil {
		return err
	}
	frame := make([]byte, 64+auth.Overhead)
	binary.BigEndian.PutUint32(frame[64:], 1) // "from node 1"
	if _, err := stream.Write(binary.BigEndian.AppendUint32(nonce, uint32(len(frame)))); err != nil {
		return err
	}
	if _, err := stream.Write(frame); err != nil {
		return err
	}
	_, _ = io.ReadAll(stream) // node 0 closes it
	return nil
}

// captureUDP reads packets from a packet socket (ETH_P_ALL: only such
// sockets see outgoing packets) until one is a UDP
// datagram from src to dst:port, and returns its payload.
func captureUDP(fd int, src, dst netip.Addr, port uint16) ([]byte, error) {
	tv := unix.NsecToTimeval(int64(2 * time.Second))
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return nil, err
	}
	buf := make([]byte, 65536)
	for range 10000 {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			return nil, err
		}
		p := buf[:n]
		if n < 28 || p[0]>>4 != 4 || p[9] != unix.IPPROTO_UDP {
			continue
		}
		ihl := int(p[0]&15) * 4
		s, _ := netip.AddrFromSlice(p[12:16])
		d, _ := netip.AddrFromSlice(p[16:20])
		if s != src || d != dst || n < ihl+8 || binary.BigEndian.Uint16(p[ihl+2:]) != port {
			continue
		}
		ulen := int(binary.BigEndian.Uint16(p[ihl+4:]))
		if ulen < 8 || ihl+ulen > n {
			continue
		}
		return bytes.Clone(p[ihl+8 : ihl+ulen]), nil
	}
	return nil, errors.New("no datagram from node 1 to node 0 captured")
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }
