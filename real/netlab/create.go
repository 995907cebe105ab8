//go:build linux

package netlab

import (
	"errors"
	"fmt"
	"net"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Create makes the lab cfg describes: the named namespaces, the veths
// (created with netlink directly in their namespaces, so nothing ever
// appears in the caller's namespace), the bridge for Bridge, addresses,
// and brings every interface up, lo included (see the package doc for
// addresses, IPv6 and offloads). On error it removes what it made, and
// only that, before returning; a name already taken is an error that
// touches nothing of the existing namespace.
func Create(cfg Config) (_ *Lab, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	l := &Lab{cfg: cfg, sw: netns.None()}
	defer func() {
		if err != nil {
			err = errors.Join(err, l.Close())
		}
	}()
	for i := range cfg.Nodes {
		ns, err := newNamedNS(l.NodeNS(i), disableIPv6)
		if err != nil {
			return nil, err
		}
		l.nodes = append(l.nodes, ns)
	}
	if cfg.Kind == Direct {
		if err := l.linkDirect(); err != nil {
			return nil, err
		}
	} else {
		ns, err := newNamedNS(l.SwitchNS(), disableIPv6)
		if err != nil {
			return nil, err
		}
		l.sw = ns
		if err := l.linkSwitch(); err != nil {
			return nil, err
		}
	}
	for i := range cfg.Nodes {
		if err := l.configureNode(i); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// handle returns a route netlink handle in ns (called name in errors).
func handle(ns netns.NsHandle, name string) (*netlink.Handle, error) {
	h, err := netlink.NewHandleAt(ns, unix.NETLINK_ROUTE)
	if err != nil {
		return nil, fmt.Errorf("netlab: netlink handle in namespace %s: %w", name, err)
	}
	return h, nil
}

// nodeVeth is a veth whose peer is node i's eth0, in node i's namespace.
func (l *Lab) nodeVeth(name string, hw net.HardwareAddr, i int) *netlink.Veth {
	attrs := netlink.NewLinkAttrs()
	attrs.Name, attrs.MTU, attrs.HardwareAddr = name, mtu, hw
	return &netlink.Veth{
		LinkAttrs:        attrs,
		PeerName:         NodeIf,
		PeerHardwareAddr: mac(i),
		PeerMTU:          mtu,
		PeerNamespace:    netlink.NsFd(l.nodes[i]),
	}
}

// linkDirect joins node 0's and node 1's eth0 with one veth pair.
func (l *Lab) linkDirect() error {
	h, err := handle(l.nodes[0], l.NodeNS(0))
	if err != nil {
		return err
	}
	defer h.Close()
	if err := h.LinkAdd(l.nodeVeth(NodeIf, mac(0), 1)); err != nil {
		return fmt.Errorf("netlab: add veth %s/%s <-> %s/%s: %w", l.NodeNS(0), NodeIf, l.NodeNS(1), NodeIf, err)
	}
	return nil
}

// linkSwitch gives every node a veth to the switch namespace, bridges the
// switch ports (Bridge) or makes them promiscuous (Relay), and brings the
// switch side up.
func (l *Lab) linkSwitch() error {
	name := l.SwitchNS()
	h, err := handle(l.sw, name)
	if err != nil {
		return err
	}
	defer h.Close()
	if err := linkUp(h, name, "lo"); err != nil {
		return err
	}
	var br *netlink.Bridge
	if l.cfg.Kind == Bridge {
		attrs := netlink.NewLinkAttrs()
		attrs.Name, attrs.MTU = bridgeIf, mtu
		br = &netlink.Bridge{LinkAttrs: attrs}
		if err := h.LinkAdd(br); err != nil {
			return fmt.Errorf("netlab: add bridge %s/%s: %w", name, bridgeIf, err)
		}
	}
	ports := l.SwitchPorts()
	for i, port := range ports {
		veth := l.nodeVeth(port, nil, i)
		if err := h.LinkAdd(veth); err != nil {
			return fmt.Errorf("netlab: add veth %s/%s <-> %s/%s: %w", name, port, l.NodeNS(i), NodeIf, err)
		}
		if br != nil {
			err = h.LinkSetMaster(veth, br)
		} else {
			err = h.SetPromiscOn(veth)
		}
		if err != nil {
			return fmt.Errorf("netlab: %s/%s: bridge or set promiscuous: %w", name, port, err)
		}
	}
	err = inNS(l.sw, name, func() error {
		for _, port := range ports {
			if err := disableOffloads(port); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("netlab: namespace %s: %w", name, err)
	}
	for _, port := range ports {
		if err := linkUp(h, name, port); err != nil {
			return err
		}
	}
	if br != nil {
		return linkUp(h, name, bridgeIf)
	}
	return nil
}

// configureNode turns eth0's offloads off, gives it its address and
// brings lo and eth0 up in node i's namespace.
func (l *Lab) configureNode(i int) error {
	name := l.NodeNS(i)
	err := inNS(l.nodes[i], name, func() error { return disableOffloads(NodeIf) })
	if err != nil {
		return fmt.Errorf("netlab: namespace %s: %w", name, err)
	}
	h, err := handle(l.nodes[i], name)
	if err != nil {
		return err
	}
	defer h.Close()
	eth, err := h.LinkByName(NodeIf)
	if err != nil {
		return fmt.Errorf("netlab: %s/%s: %w", name, NodeIf, err)
	}
	a := addr(i)
	ipnet := &net.IPNet{IP: a.AsSlice(), Mask: net.CIDRMask(prefixLen, 32)}
	if err := h.AddrAdd(eth, &netlink.Addr{IPNet: ipnet}); err != nil {
		return fmt.Errorf("netlab: %s/%s: add address %s: %w", name, NodeIf, ipnet, err)
	}
	if err := linkUp(h, name, "lo"); err != nil {
		return err
	}
	return linkUp(h, name, NodeIf)
}

// linkUp brings the interface ifname of namespace ns up.
func linkUp(h *netlink.Handle, ns, ifname string) error {
	link, err := h.LinkByName(ifname)
	if err == nil {
		err = h.LinkSetUp(link)
	}
	if err != nil {
		return fmt.Errorf("netlab: bring %s/%s up: %w", ns, ifname, err)
	}
	return nil
}
