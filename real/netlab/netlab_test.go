//go:build linux

package netlab

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/chronosync/chronosync/ci/needs"
)

// needLab skips the test when this process cannot build labs.
func needLab(t *testing.T) {
	t.Helper()
	needs.Available(t, Available())
}

// newLab creates a lab with a fresh prefix that is closed when the test
// ends, whatever happens.
func newLab(t *testing.T, kind Kind, nodes int) *Lab {
	t.Helper()
	l, err := Create(Config{Prefix: testPrefix(), Nodes: nodes, Kind: kind})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Error(err)
		}
	})
	return l
}

// nsExists reports whether the named namespace is listed, as by
// `ip netns list`.
func nsExists(t *testing.T, name string) bool {
	t.Helper()
	_, err := os.Stat(filepath.Join(nsDir, name))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return err == nil
}

// handleFor returns a netlink handle in the named namespace, closed when
// the test ends.
func handleFor(t *testing.T, name string) *netlink.Handle {
	t.Helper()
	ns, err := netns.GetFromName(name)
	if err != nil {
		t.Fatalf("open namespace %s: %v", name, err)
	}
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns, unix.NETLINK_ROUTE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	return h
}

// link returns the interface ifname of the named namespace.
func link(t *testing.T, h *netlink.Handle, ns, ifname string) netlink.Link {
	t.Helper()
	l, err := h.LinkByName(ifname)
	if err != nil {
		t.Fatalf("%s/%s: %v", ns, ifname, err)
	}
	return l
}

func isUp(l netlink.Link) bool { return l.Attrs().Flags&net.FlagUp != 0 }

func TestConfigValidate(t *testing.T) {
	bad := []Config{
		{Prefix: "", Nodes: 2, Kind: Direct},
		{Prefix: "xx123", Nodes: 2, Kind: Direct},
		{Prefix: "cs123456789", Nodes: 2, Kind: Direct},
		{Prefix: "csAB", Nodes: 2, Kind: Direct},
		{Prefix: "cs1", Nodes: 3, Kind: Direct},
		{Prefix: "cs1", Nodes: 0, Kind: Bridge},
		{Prefix: "cs1", Nodes: MaxNodes + 1, Kind: Relay},
		{Prefix: "cs1", Nodes: 2, Kind: "star"},
	}
	for _, c := range bad {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v: Validate() = nil, want an error", c)
		}
		if _, err := Create(c); err == nil {
			t.Errorf("%+v: Create succeeded", c)
		}
	}
	for range 100 {
		p := NewPrefix()
		if err := (Config{Prefix: p, Nodes: 2, Kind: Direct}).Validate(); err != nil || len(p) != 8 {
			t.Fatalf("NewPrefix() = %q: %v", p, err)
		}
	}
}

func TestSweepMatcher(t *testing.T) {
	for _, tc := range []struct {
		prefix, name string
		want         bool
	}{
		{"", "csab12-n0", true},
		{"", "cs12345678-sw", true},
		{"", "cs123456789-sw", false},
		{"", "cs-n0", false},
		{"", "xtest-keep", false},
		{"", "csab12", false},
		{"csab12", "csab12-n3", true},
		{"csab12", "csab123-n3", false},
		{"csab1", "csab12-n3", false},
		{"csab12", "xcsab12-n3", false},
	} {
		if got := sweepMatcher(tc.prefix)(tc.name); got != tc.want {
			t.Errorf("Sweep(%q) removes %q = %v, want %v", tc.prefix, tc.name, got, tc.want)
		}
	}
	if _, err := Sweep("bad-prefix"); err == nil {
		t.Error("Sweep(bad-prefix) succeeded")
	}
}

// TestCreateClose builds each kind of topology and checks every
// namespace, interface, address, flag and offload; then that Close
// removes the namespaces and is idempotent.
func TestCreateClose(t *testing.T) {
	needLab(t)
	for _, tc := range []struct {
		kind  Kind
		nodes int
	}{{Direct, 2}, {Bridge, 2}, {Bridge, 4}, {Relay, 2}, {Relay, 3}} {
		t.Run(fmt.Sprintf("%s/%d", tc.kind, tc.nodes), func(t *testing.T) {
			l := newLab(t, tc.kind, tc.nodes)
			checkLab(t, l)
			names := []string{l.SwitchNS()}
			for i := range l.Nodes() {
				names = append(names, l.NodeNS(i))
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			for _, n := range names {
				if n != "" && nsExists(t, n) {
					t.Errorf("namespace %s still there after Close", n)
				}
			}
			if err := l.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
			if err := l.Do(0, func() error { return nil }); err == nil {
				t.Error("Do after Close succeeded")
			}
		})
	}
}

func checkLab(t *testing.T, l *Lab) {
	t.Helper()
	for i := range l.Nodes() {
		ns := l.NodeNS(i)
		if !nsExists(t, ns) {
			t.Fatalf("namespace %s not listed", ns)
		}
		h := handleFor(t, ns)
		if lo := link(t, h, ns, "lo"); !isUp(lo) {
			t.Errorf("%s/lo is down", ns)
		}
		eth := link(t, h, ns, NodeIf)
		a := eth.Attrs()
		if !isUp(eth) || a.MTU != 1500 || a.HardwareAddr.String() != l.MAC(i).String() {
			t.Errorf("%s/%s: up %v, MTU %d, MAC %s; want up, 1500, %s", ns, NodeIf, isUp(eth), a.MTU, a.HardwareAddr, l.MAC(i))
		}
		addrs, err := h.AddrList(eth, unix.AF_INET)
		if err != nil {
			t.Fatal(err)
		}
		want := netip.PrefixFrom(l.Addr(i), l.Prefixlen()).String()
		if len(addrs) != 1 || addrs[0].IPNet.String() != want {
			t.Errorf("%s/%s addresses %v, want %s", ns, NodeIf, addrs, want)
		}
		if v6, _ := h.AddrList(eth, unix.AF_INET6); len(v6) != 0 {
			t.Errorf("%s/%s has IPv6 addresses %v", ns, NodeIf, v6)
		}
		checkOffloads(t, l.Do, i, NodeIf, ns)
	}
	if l.Kind() == Direct {
		if l.SwitchNS() != "" || l.SwitchPorts() != nil {
			t.Errorf("Direct lab has switch %q ports %v", l.SwitchNS(), l.SwitchPorts())
		}
		return
	}
	sw := l.SwitchNS()
	h := handleFor(t, sw)
	br, brErr := h.LinkByName(bridgeIf)
	if (l.Kind() == Bridge) != (brErr == nil) {
		t.Errorf("%s: bridge %s present = %v", sw, bridgeIf, brErr == nil)
	}
	for i, port := range l.SwitchPorts() {
		p := link(t, h, sw, port)
		a := p.Attrs()
		if !isUp(p) || a.MTU != 1500 {
			t.Errorf("%s/%s: up %v, MTU %d", sw, port, isUp(p), a.MTU)
		}
		if addrs, _ := h.AddrList(p, unix.AF_UNSPEC); len(addrs) != 0 {
			t.Errorf("%s/%s has addresses %v", sw, port, addrs)
		}
		switch l.Kind() {
		case Bridge:
			if a.MasterIndex != br.Attrs().Index {
				t.Errorf("%s/%s is not in %s", sw, port, bridgeIf)
			}
		case Relay:
			if a.Promisc == 0 || a.MasterIndex != 0 {
				t.Errorf("%s/%s: promisc %d, master %d; want promiscuous, no master", sw, port, a.Promisc, a.MasterIndex)
			}
		}
		checkOffloads(t, func(_ int, f func() error) error { return l.DoSwitch(f) }, i, port, sw)
	}
}

func checkOffloads(t *testing.T, do func(int, func() error) error, i int, ifname, ns string) {
	t.Helper()
	var on []string
	if err := do(i, func() (err error) { on, err = offloadsOn(ifname); return err }); err != nil {
		t.Fatal(err)
	}
	if len(on) != 0 {
		t.Errorf("%s/%s: offloads still on: %v", ns, ifname, on)
	}
}

// TestReachability sends UDP datagrams between nodes through sockets
// opened with Do, in both directions, for Direct and Bridge (Relay is
// tested with the relay in package shaper). ARP resolves on its own.
func TestReachability(t *testing.T) {
	needLab(t)
	for _, tc := range []struct {
		kind  Kind
		nodes int
		pairs [][2]int
	}{
		{Direct, 2, [][2]int{{0, 1}, {1, 0}}},
		{Bridge, 3, [][2]int{{0, 1}, {1, 0}, {2, 0}, {1, 2}}},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			l := newLab(t, tc.kind, tc.nodes)
			for _, p := range tc.pairs {
				udpExchange(t, l, p[0], p[1])
			}
		})
	}
}

// udpExchange sends a datagram from node `from` to node `to`, each socket
// opened in its node's namespace, and checks it arrives from the right
// address.
func udpExchange(t *testing.T, l *Lab, from, to int) {
	t.Helper()
	var rx, tx *net.UDPConn
	err := l.Do(to, func() (err error) {
		rx, err = net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(l.Addr(to), 0)))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer rx.Close()
	dst := rx.LocalAddr().(*net.UDPAddr)
	if err := l.Do(from, func() (err error) { tx, err = net.DialUDP("udp4", nil, dst); return err }); err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	msg := "hello from " + l.NodeNS(from)
	if _, err := tx.Write([]byte(msg)); err != nil {
		t.Fatalf("%s -> %s: %v", l.NodeNS(from), dst, err)
	}
	rx.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 100)
	n, src, err := rx.ReadFromUDPAddrPort(buf)
	if err != nil {
		t.Fatalf("%s -> %s: %v", l.NodeNS(from), dst, err)
	}
	if string(buf[:n]) != msg || src.Addr() != l.Addr(from) {
		t.Errorf("%s got %q from %s, want %q from %s", l.NodeNS(to), buf[:n], src, msg, l.Addr(from))
	}
}

// TestDo checks that f runs in the node's namespace, that a panic reaches
// the caller and that node indexes are checked.
func TestDo(t *testing.T) {
	needLab(t)
	l := newLab(t, Bridge, 2)
	for i := range 2 {
		err := l.Do(i, func() error {
			ifi, err := net.InterfaceByName(NodeIf)
			if err == nil && ifi.HardwareAddr.String() != l.MAC(i).String() {
				t.Errorf("Do(%d) sees eth0 %s, want %s", i, ifi.HardwareAddr, l.MAC(i))
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	err := l.DoSwitch(func() error { _, err := net.InterfaceByName("p1"); return err })
	if err != nil {
		t.Errorf("DoSwitch: %v", err)
	}
	if _, err := net.InterfaceByName("p1"); err == nil {
		t.Error("p1 visible outside the switch namespace")
	}
	for _, i := range []int{-1, 2} {
		if err := l.Do(i, func() error { return nil }); err == nil {
			t.Errorf("Do(%d) succeeded", i)
		}
	}
	func() {
		defer func() {
			if p := recover(); p != "boom" {
				t.Errorf("recovered %v, want boom", p)
			}
		}()
		_ = l.Do(0, func() error { panic("boom") })
	}()
}

// TestSweep leaves a lab without closing it, and checks that Sweep of its
// prefix removes its namespaces and a link named after it in the caller's
// namespace (here a scratch namespace with a foreign name), and touches
// neither that namespace nor a link of another name.
func TestSweep(t *testing.T) {
	needLab(t)
	l, err := Create(Config{Prefix: testPrefix(), Nodes: 2, Kind: Relay})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() }) // only if Sweep fails
	keep := "xtest-keep-" + l.Prefix()
	scratch, err := newNamedNS(keep, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { scratch.Close(); deleteNamedNS(keep) })

	var removed []string
	err = inNS(scratch, keep, func() error {
		for _, name := range []string{l.Prefix() + "-x", "other0"} {
			attrs := netlink.NewLinkAttrs()
			attrs.Name = name
			if err := netlink.LinkAdd(&netlink.Bridge{LinkAttrs: attrs}); err != nil {
				return err
			}
		}
		var err error
		removed, err = Sweep(l.Prefix())
		if err != nil {
			return err
		}
		if _, err := netlink.LinkByName(l.Prefix() + "-x"); err == nil {
			t.Errorf("link %s-x survived Sweep", l.Prefix())
		}
		if _, err := netlink.LinkByName("other0"); err != nil {
			t.Errorf("Sweep removed link other0: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{l.NodeNS(0), l.NodeNS(1), l.SwitchNS(), "link:" + l.Prefix() + "-x"}
	slices.Sort(want)
	if !slices.Equal(removed, want) {
		t.Errorf("Sweep(%s) removed %v, want %v", l.Prefix(), removed, want)
	}
	for _, n := range want {
		if !strings.HasPrefix(n, "link:") && nsExists(t, n) {
			t.Errorf("namespace %s survived Sweep", n)
		}
	}
	if !nsExists(t, keep) {
		t.Errorf("Sweep removed %s", keep)
	}
}

// TestCreateFailsMidway makes Create fail after it made some namespaces:
// on a prefix already in use, and on a switch namespace name someone else
// holds. Nothing of the failed lab may remain, and nothing of the others
// may be touched.
func TestCreateFailsMidway(t *testing.T) {
	needLab(t)
	l := newLab(t, Bridge, 2)
	if _, err := Create(Config{Prefix: l.Prefix(), Nodes: 2, Kind: Bridge}); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Create on a prefix in use: %v, want fs.ErrExist", err)
	}
	checkLab(t, l)
	udpExchange(t, l, 0, 1)

	prefix := testPrefix()
	taken := prefix + "-sw"
	ns, err := newNamedNS(taken, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ns.Close(); deleteNamedNS(taken) })
	_, err = Create(Config{Prefix: prefix, Nodes: 3, Kind: Relay})
	if !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), taken) {
		t.Fatalf("Create with %s taken: %v, want fs.ErrExist naming it", taken, err)
	}
	for i := range 3 {
		if n := nodeNS(prefix, i); nsExists(t, n) {
			t.Errorf("failed Create left %s", n)
		}
	}
	if !nsExists(t, taken) {
		t.Errorf("failed Create removed %s, which it did not make", taken)
	}
}
