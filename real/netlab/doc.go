// Package netlab builds and removes the network namespaces and links of one
// real-backend run.
//
// A run's namespaces are named after a per-run prefix (see NewPrefix):
// "<prefix>-n<i>" for node i and "<prefix>-sw" for the switch. They are
// named namespaces, bind-mounted under /run/netns like `ip netns add`
// makes them, so that `ip netns list` and `ip netns exec` see them and
// Sweep can remove those a crashed run left behind. Like `ip netns add`,
// Create makes /run/netns a shared mount point first if it is not one.
//
// # Topologies
//
//   - Direct: two nodes whose eth0s are the two ends of one veth pair.
//   - Bridge: every node's eth0 is a veth whose peer, p<i>, sits in the
//     switch namespace, enslaved to the Linux bridge br0.
//   - Relay: as Bridge, but the switch ports are not bridged: they are up,
//     promiscuous and without addresses, and a userspace relay (package
//     shaper) moves frames between them.
//
// # Addresses
//
// Node i's eth0 has the IPv4 address 10.77.0.0/16 + (i+1), so node 0 is
// 10.77.0.1/16, and the locally administered MAC 02:00:0a:4d:hi:lo whose
// last two bytes are those of the address. The range is private and lives
// only inside the run's namespaces, so runs never collide with each other
// or with the host. IPv6 is disabled in every namespace of a run (no
// duplicate address detection, router solicitations or MLD reports), so
// the only frames on a link are the ones the run sends and the ARP that
// resolves them. MTUs are 1500.
//
// # Offloads
//
// Every veth end (eth0 and the switch ports) has TX checksum offload,
// TSO, GSO and GRO turned off through the SIOCETHTOOL ioctl (the same
// calls as `ethtool -K dev tx off tso off gso off gro off`). Each frame on
// a link is then a real, MTU-sized frame with a complete checksum: what a
// packet socket reads on a switch port can be written to another port as
// is and is accepted by the receiving stack, and no GSO super-frame ever
// exceeds the MTU.
//
// # Namespaces and threads
//
// Lab.Do runs a function on an OS thread that has entered a node's
// namespace. Sockets opened there stay in that namespace for their whole
// life and may be used from any goroutine; goroutines started by the
// function do not run in the namespace. Package netlab itself never moves
// the calling goroutine's thread.
package netlab
