//go:build linux

package netlab

import (
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"regexp"
	"strconv"
	"sync"

	"github.com/vishvananda/netns"
)

// Kind is a topology kind.
type Kind string

// Topology kinds.
const (
	// Direct is exactly two nodes joined by one veth pair, no switch.
	Direct Kind = "direct"
	// Bridge joins every node's eth0, a veth whose peer sits in a switch
	// namespace, with a Linux bridge (no impairment).
	Bridge Kind = "bridge"
	// Relay is like Bridge but the switch-side veths are not bridged: a
	// userspace relay (package shaper) moves frames between them.
	Relay Kind = "relay"
)

// MaxNodes is the largest number of nodes a lab can have.
const MaxNodes = 1024

// Interface names inside the namespaces.
const (
	// NodeIf is the name of every node's interface.
	NodeIf = "eth0"
	// bridgeIf is the switch namespace's bridge (Bridge only).
	bridgeIf = "br0"
	mtu      = 1500
)

// prefixRE is what Config.Prefix must match; ourNameRE matches the names
// of every namespace or link any lab makes.
var (
	prefixRE  = regexp.MustCompile(`^cs[a-z0-9]{1,8}$`)
	ourNameRE = regexp.MustCompile(`^cs[a-z0-9]{1,8}-`)
)

// Config describes the lab of one run.
type Config struct {
	// Prefix is the per-run prefix: namespaces are named "<Prefix>-n<i>"
	// and "<Prefix>-sw". It must match ^cs[a-z0-9]{1,8}$.
	Prefix string
	// Nodes is the number of nodes: 2 for Direct, 1 to MaxNodes otherwise.
	Nodes int
	// Kind is the topology.
	Kind Kind
}

// Validate reports whether c describes a lab Create can build.
func (c Config) Validate() error {
	if !prefixRE.MatchString(c.Prefix) {
		return fmt.Errorf("netlab: prefix %q does not match %s", c.Prefix, prefixRE)
	}
	switch c.Kind {
	case Direct:
		if c.Nodes != 2 {
			return fmt.Errorf("netlab: %s topology needs exactly 2 nodes, not %d", c.Kind, c.Nodes)
		}
	case Bridge, Relay:
		if c.Nodes < 1 || c.Nodes > MaxNodes {
			return fmt.Errorf("netlab: %s topology needs 1 to %d nodes, not %d", c.Kind, MaxNodes, c.Nodes)
		}
	default:
		return fmt.Errorf("netlab: unknown topology kind %q (want %q, %q or %q)", c.Kind, Direct, Bridge, Relay)
	}
	return nil
}

// NewPrefix returns a fresh prefix: "cs" and 6 random base-36 characters.
func NewPrefix() string {
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	b := []byte("cs")
	for range 6 {
		b = append(b, digits[rand.IntN(len(digits))])
	}
	return string(b)
}

// nodeNS and switchNS are the namespace names of a prefix.
func nodeNS(prefix string, i int) string { return prefix + "-n" + strconv.Itoa(i) }
func switchNS(prefix string) string      { return prefix + "-sw" }

// switchPort is the switch-side name of node i's veth.
func switchPort(i int) string { return "p" + strconv.Itoa(i) }

// Addr returns node i's address in every lab (see the package doc).
func addr(i int) netip.Addr {
	h := i + 1
	return netip.AddrFrom4([4]byte{10, 77, byte(h >> 8), byte(h)})
}

// prefixLen is the length of the lab network's prefix, 10.77.0.0/16.
const prefixLen = 16

// mac returns node i's eth0 hardware address (see the package doc).
func mac(i int) net.HardwareAddr {
	h := i + 1
	return net.HardwareAddr{0x02, 0x00, 10, 77, byte(h >> 8), byte(h)}
}

// Lab is the namespaces and links of one run, made by Create. Its methods
// are safe for concurrent use; Close waits for the Do calls under way.
type Lab struct {
	cfg   Config
	nodes []netns.NsHandle // open handles keep the namespaces' identity
	sw    netns.NsHandle   // netns.None() for Direct

	mu     sync.RWMutex // held for reading by Do, for writing by Close
	closed bool
}

// Prefix returns the lab's prefix.
func (l *Lab) Prefix() string { return l.cfg.Prefix }

// Nodes returns the number of nodes.
func (l *Lab) Nodes() int { return l.cfg.Nodes }

// Kind returns the topology kind.
func (l *Lab) Kind() Kind { return l.cfg.Kind }

// NodeNS returns the name of node i's namespace.
func (l *Lab) NodeNS(i int) string { return nodeNS(l.cfg.Prefix, i) }

// Addr returns node i's IPv4 address on eth0, 10.77.0.0/16 + (i+1).
func (l *Lab) Addr(i int) netip.Addr { return addr(i) }

// Prefixlen returns the lab network's prefix length (16).
func (l *Lab) Prefixlen() int { return prefixLen }

// MAC returns the hardware address of node i's eth0.
func (l *Lab) MAC(i int) net.HardwareAddr { return mac(i) }

// SwitchNS returns the name of the switch namespace, or "" for Direct.
func (l *Lab) SwitchNS() string {
	if l.cfg.Kind == Direct {
		return ""
	}
	return switchNS(l.cfg.Prefix)
}

// SwitchPorts returns the names of the switch-side interfaces, in the
// switch namespace, indexed by node; nil for Direct.
func (l *Lab) SwitchPorts() []string {
	if l.cfg.Kind == Direct {
		return nil
	}
	ports := make([]string, l.cfg.Nodes)
	for i := range ports {
		ports[i] = switchPort(i)
	}
	return ports
}

// Do runs f on an OS thread locked inside node i's namespace and waits for
// it; see the package doc for what that means for sockets and goroutines.
// The thread's namespace is restored afterwards; when that fails, the
// thread is discarded. A panic in f is re-raised in the caller. f must not
// call Close, which waits for Do.
func (l *Lab) Do(i int, f func() error) error {
	if i < 0 || i >= len(l.nodes) {
		return fmt.Errorf("netlab: Do: node %d out of range [0, %d)", i, len(l.nodes))
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return l.errClosed()
	}
	return inNS(l.nodes[i], l.NodeNS(i), f)
}

// DoSwitch is Do in the switch namespace; it fails for Direct.
func (l *Lab) DoSwitch(f func() error) error {
	if l.cfg.Kind == Direct {
		return fmt.Errorf("netlab: DoSwitch: %s topology %s has no switch", l.cfg.Kind, l.cfg.Prefix)
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return l.errClosed()
	}
	return inNS(l.sw, l.SwitchNS(), f)
}

func (l *Lab) errClosed() error { return fmt.Errorf("netlab: lab %s is closed", l.cfg.Prefix) }
