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

	"github.com/chronosync/chronosync/ci/needs"
)

// netns creates a network namespace with its loopback up, removed at the end
// of the test, and returns its name. It skips the test where namespaces
// cannot be made (not root, no ip(8) or tc(8)).
func netns(t *testing.T) string {
	t.Helper()
	needs.Root(t, "to create a network namespace")
	needs.Command(t, "iproute2", "ip", "tc")
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

// hold is about how long the token bucket of slowLoopback holds a datagram
// sent into it empty: a 1-byte payload is 43 bytes on the wire (Ethernet 14,
// IPv4 20, UDP 8), 43 ms of tokens at 1 byte/ms; 40 ms leaves a margin. A
// Send whose thread a busy machine deschedules for longer than that between
// sendmsg and its look at the error queue may rightly find the held
// datagram's kernel stamp there; then the test cannot tell a held datagram
// from one that passed, and says so (skipIfBusy).
const hold = 40 * time.Millisecond

// timedSend sends a 1-byte datagram from a to b and returns its stamp and
// how long Send took. A user-space stamp must lie inside Send's span, and
// Send must have waited its whole budget for the kernel's before taking it.
func timedSend(t *testing.T, a, b *Conn) (Stamp, time.Duration) {
	t.Helper()
	start := time.Now()
	tx, err := a.Send(b.LocalAddr(), []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	end := time.Now()
	took := end.Sub(start)
	if tx.Source == SourceUser {
		if tx.Time < start.UnixNano() || tx.Time > end.UnixNano() {
			t.Errorf("user tx stamp %d outside Send's span [%d, %d]", tx.Time, start.UnixNano(), end.UnixNano())
		}
		if took < txWait {
			t.Errorf("Send fell back to the user stamp after %v, before its %v wait for the kernel's was over", took, txWait)
		}
	}
	return tx, took
}

// skipIfBusy skips t when took, how long a Send that returned a kernel stamp
// took, reaches hold: the stamp may then be that of a held datagram, rightly
// found because Send looked late, not one Send waited for. The skip is
// recorded as those of ci/needs are, so that make test lists it.
func skipIfBusy(t *testing.T, took time.Duration, what string) {
	t.Helper()
	if took >= hold {
		needs.Skip(t, fmt.Sprintf("machine too busy: a Send took %v, at least the %v the token bucket holds a datagram, so %s may be a held datagram's own stamp, found late", took, hold, what))
	}
}

// TestLateTxStamp slows the loopback down with a token bucket, so that the
// kernel's transmit timestamp, taken by the driver after the qdisc, comes
// after Send gave up waiting: Send falls back to the user-space stamp, and
// the next Send discards the late one. Send's own duration is not bounded
// (a busy machine may deschedule it); that it did not wait for the held
// datagram shows in the user stamp it returns.
func TestLateTxStamp(t *testing.T) {
	ns, a, b := slowLoopback(t)
	buf := make([]byte, 64)
	send := func() (Stamp, time.Duration) {
		t.Helper()
		return timedSend(t, a, b)
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
	var slowest time.Duration // the longest Send that returned a kernel stamp
	tx, took := send()
	for ; tx.Source == SourceKernel; tx, took = send() {
		slowest = max(slowest, took)
		if kernel++; kernel > 5 {
			skipIfBusy(t, slowest, "a kernel stamp")
			t.Fatalf("%d datagrams through a %d-byte bucket without delay", kernel, 128)
		}
		recv(tx)
	}
	d := recv(Stamp{Time: time.Now().UnixNano()})
	t.Logf("%d datagrams passed undelayed; the next was held %v", kernel, d)
	if tx, took = send(); tx.Source != SourceUser {
		skipIfBusy(t, took, "the kernel stamp of a datagram sent into the empty bucket")
		t.Errorf("with the bucket empty, tx stamp from %s, want user", tx.Source)
	}
	if d := recv(tx); d < 10*time.Millisecond {
		t.Errorf("held datagram: rx - tx = %v, want the bucket's delay", d)
	}
	if got, want := a.Stats(), (Stats{TxKernel: kernel, TxUser: 2, TxLate: 1}); got != want {
		t.Errorf("stats = %+v, want %+v", got, want)
	}

	// Without the bucket the loopback stamps a datagram before sendmsg
	// returns, and Send looks at least once: kernel, however busy the
	// machine.
	run(t, "ip", "netns", "exec", ns, "tc", "qdisc", "del", "dev", "lo", "root")
	if tx, _ := send(); tx.Source != SourceKernel {
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
	var slowest time.Duration
	for {
		tx, took := timedSend(t, a, b)
		if tx.Source == SourceUser {
			break
		}
		slowest = max(slowest, took)
		if kernel++; kernel > 5 {
			skipIfBusy(t, slowest, "a kernel stamp")
			t.Fatalf("%d datagrams through a %d-byte bucket without delay", kernel, 128)
		}
	}
	// heldSend sends into the bucket, which holds the datagram behind
	// those sent before it: its stamp cannot be back.
	heldSend := func(i int) {
		t.Helper()
		if tx, took := timedSend(t, a, b); tx.Source != SourceUser {
			skipIfBusy(t, took, fmt.Sprintf("send %d's kernel stamp", i))
			t.Fatalf("send %d: a kernel tx stamp for a datagram the bucket holds", i)
		}
	}
	sends := 1
	for start := time.Now(); time.Since(start) < 100*time.Millisecond; sends++ {
		heldSend(sends)
	}
	// However the Sends above were scheduled, make sure the stamp of an
	// earlier datagram is queued when one more Send looks for its own:
	// receive those that passed and the first held one.
	for range kernel + 1 {
		if _, _, _, err := b.Recv(make([]byte, 64)); err != nil {
			t.Fatal(err)
		}
	}
	heldSend(sends)
	sends++
	s := a.Stats()
	t.Logf("%d sends held, stats %+v", sends, s)
	if s.TxKernel != kernel || s.TxUser != uint64(sends) || s.TxLate == 0 {
		t.Errorf("stats = %+v, want TxKernel %d, TxUser %d, TxLate > 0", s, kernel, sends)
	}
}
