package tsudp

import (
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// netns creates a network namespace with its loopback up, removed at the end
// of the test, and returns its name. It skips the test where namespaces
// cannot be made (not root, no ip(8)).
func netns(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root for a network namespace")
	}
	name := fmt.Sprintf("tsudp-test-%d", os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Skipf("ip netns add: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", name).Run() })
	run(t, "ip", "-n", name, "link", "set", "lo", "up")
	return name
}

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v: %s", name, args, err, out)
	}
}

// listenIn opens a Conn in the named namespace, closed at the end of the test.
func listenIn(t *testing.T, ns string, laddr netip.AddrPort) *Conn {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	defer orig.Close()
	target, err := os.Open("/run/netns/" + ns)
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		t.Fatal(err)
	}
	c, lerr := Listen(laddr)
	if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err != nil {
		panic(err) // the thread is stuck in the test namespace
	}
	if lerr != nil {
		t.Fatal(lerr)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// slowLoopback makes a namespace whose loopback a token bucket slows down to
// 1 byte/ms after a 128-byte burst, and two Conns in it.
func slowLoopback(t *testing.T) (ns string, a, b *Conn) {
	ns = netns(t)
	run(t, "ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", "lo", "root", "tbf", "rate", "8kbit", "burst", "128", "latency", "10s")
	laddr := netip.MustParseAddrPort("127.0.0.1:0")
	return ns, listenIn(t, ns, laddr), listenIn(t, ns, laddr)
}

// TestLateTxStamp slows the loopback down with a token bucket, so that the kernel's transmit timestamp, taken by the driver after the
// qdisc, comes after Send gave up waiting: Send falls back to the user-space
// stamp, and the next Send discards the late one.
func TestLateTxStamp(t *testing.T) {
	ns, a, b := slowLoopback(t)
	buf := make([]byte, 64)

	// send sends a 1-byte datagram (43 bytes on the wire: 40 ms of tokens)
	// and checks that Send returned promptly with a stamp inside its span
	// when the stamp is the user-space one.
	send := func() Stamp {
		t.Helper()
		start := time.Now()
		tx, err := a.Send(b.LocalAddr(), []byte("x"))
		if err != nil {
			t.Fatal(err)
		}
		end := time.Now()
		if took := end.Sub(start); took > 20*time.Millisecond {
			t.Errorf("Send took %v, want about %v at most", took, txWait)
		}
		if tx.Source == SourceUser && (tx.Time < start.UnixNano() || tx.Time > end.UnixNano()) {
			t.Errorf("user tx stamp %d outside Send's span [%d, %d]", tx.Time, start.UnixNano(), end.UnixNano())
		}
		return tx
	}
	// recv receives a datagram, which proves its transmit timestamp queued.
	recv := func(tx Stamp) time.Duration {
		t.Helper()
		_, _, rx, err := b.Recv(buf)
		if err != nil {
			t.Fatal(err)
		}
		if rx.Source != SourceKernel {
			t.Errorf("rx stamp from %s, want kernel", rx.Source)
		}
		return time.Duration(rx.Time - tx.Time)
	}

	// Use up the bucket's burst: the first datagram it holds back is late.
	var kernel uint64
	for tx := send(); tx.Source == SourceKernel; tx = send() {
		if kernel++; kernel > 5 {
			t.Fatalf("%d datagrams through a %d-byte bucket without delay", kernel, 128)
		}
		recv(tx)
	}
	d := recv(Stamp{Time: time.Now().UnixNano()})
	t.Logf("%d datagrams passed undelayed; the next was held %v", kernel, d)
	tx := send()
	if tx.Source != SourceUser {
		t.Errorf("with the bucket empty, tx stamp from %s, want user", tx.Source)
	}
	if d := recv(tx); d < 10*time.Millisecond {
		t.Errorf("held datagram: rx - tx = %v, want the bucket's delay", d)
	}
	if got, want := a.Stats(), (Stats{TxKernel: kernel, TxUser: 2, TxLate: 1}); got != want {
		t.Errorf("stats = %+v, want %+v", got, want)
	}

	run(t, "ip", "netns", "exec", ns, "tc", "qdisc", "del", "dev", "lo", "root")
	if tx := send(); tx.Source != SourceKernel {
		t.Errorf("without the bucket, tx stamp from %s, want kernel", tx.Source)
	}
	if got, want := a.Stats(), (Stats{TxKernel: kernel + 1, TxUser: 2, TxLate: 2}); got != want {
		t.Errorf("stats = %+v, want %+v", got, want)
	}
}

// TestLateTxStampNotMatched sends back to back through an empty token
// bucket, which holds every datagram at least 40 ms: no Send may return a
// kernel stamp, though the stamps of the first datagrams come back while
// later Sends wait. Only the OPT_ID tells them apart.
func TestLateTxStampNotMatched(t *testing.T) {
	_, a, b := slowLoopback(t)
	var kernel uint64
	for {
		tx, err := a.Send(b.LocalAddr(), []byte("x"))
		if err != nil {
			t.Fatal(err)
		}
		if tx.Source == SourceUser {
			break
		}
		if kernel++; kernel > 5 {
			t.Fatalf("%d datagrams through a %d-byte bucket without delay", kernel, 128)
		}
	}
	sends := 1
	for start := time.Now(); time.Since(start) < 100*time.Millisecond; sends++ {
		tx, err := a.Send(b.LocalAddr(), []byte("x"))
		if err != nil {
			t.Fatal(err)
		}
		if tx.Source != SourceUser {
			t.Fatalf("send %d: a kernel tx stamp for a datagram the bucket holds", sends)
		}
	}
	s := a.Stats()
	t.Logf("%d sends held, stats %+v", sends, s)
	if s.TxKernel != kernel || s.TxUser != uint64(sends) || s.TxLate == 0 {
		t.Errorf("stats = %+v, want TxKernel %d, TxUser %d, TxLate > 0", s, kernel, sends)
	}
}
