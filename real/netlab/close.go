//go:build linux

package netlab

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Close removes everything Create made: it closes the lab's handles and
// deletes its named namespaces, which takes their veths and bridge with
// them once nothing else holds a namespace (a socket opened by Do does).
// Create makes nothing in the caller's namespace, so nothing is left
// there. Close is idempotent; later calls return nil.
func (l *Lab) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	var errs []error
	for i := range l.nodes {
		l.nodes[i].Close()
		errs = append(errs, deleteNamedNS(l.NodeNS(i)))
	}
	if l.sw.IsOpen() {
		l.sw.Close()
		errs = append(errs, deleteNamedNS(l.SwitchNS()))
	}
	return errors.Join(errs...)
}

// Sweep removes every namespace, and every link of the caller's
// namespace, whose name starts with prefix + "-", as a crashed run leaves
// them; prefix "" means those of every run (names matching
// ^cs[a-z0-9]{1,8}-). It never touches another name. It returns what it
// removed: namespace names, and links as "link:<name>".
func Sweep(prefix string) ([]string, error) {
	if prefix != "" && !prefixRE.MatchString(prefix) {
		return nil, fmt.Errorf("netlab: Sweep: prefix %q does not match %s", prefix, prefixRE)
	}
	ours := sweepMatcher(prefix)
	var removed []string
	var errs []error
	entries, err := os.ReadDir(nsDir)
	if err != nil && !os.IsNotExist(err) {
		errs = append(errs, fmt.Errorf("netlab: Sweep: %w", err))
	}
	for _, e := range entries {
		if !ours(e.Name()) {
			continue
		}
		if err := deleteNamedNS(e.Name()); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, e.Name())
	}
	links, err := netlink.LinkList()
	if err != nil {
		errs = append(errs, fmt.Errorf("netlab: Sweep: list links: %w", err))
	}
	for _, link := range links {
		name := link.Attrs().Name
		if !ours(name) {
			continue
		}
		if err := netlink.LinkDel(link); errors.Is(err, unix.ENODEV) {
			continue // the peer of a veth deleted before it
		} else if err != nil {
			errs = append(errs, fmt.Errorf("netlab: Sweep: delete link %s: %w", name, err))
			continue
		}
		removed = append(removed, "link:"+name)
	}
	slices.Sort(removed)
	return removed, errors.Join(errs...)
}

// sweepMatcher returns whether Sweep(prefix) removes a name.
func sweepMatcher(prefix string) func(name string) bool {
	return func(name string) bool {
		return ourNameRE.MatchString(name) && (prefix == "" || strings.HasPrefix(name, prefix+"-"))
	}
}

// Available reports whether this process can build labs: it must be able
// to write under /run/netns, create a network namespace and a veth pair
// in it. The error says what is missing; tests skip with it.
func Available() error {
	if err := os.MkdirAll(nsDir, 0o755); err != nil {
		return fmt.Errorf("netlab unavailable: %w", err)
	}
	if err := unix.Access(nsDir, unix.W_OK); err != nil {
		return fmt.Errorf("netlab unavailable: %s not writable: %w", nsDir, err)
	}
	done := make(chan error, 1)
	go func() {
		// Never unlocked: the thread, in a throwaway namespace that
		// vanishes with it, is discarded when this goroutine returns.
		runtime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			done <- fmt.Errorf("cannot create a network namespace (root or CAP_SYS_ADMIN needed): %w", err)
			return
		}
		h, err := netlink.NewHandleAt(netns.None(), unix.NETLINK_ROUTE)
		if err != nil {
			done <- fmt.Errorf("netlink: %w", err)
			return
		}
		defer h.Close()
		attrs := netlink.NewLinkAttrs()
		attrs.Name = "probe0"
		if err := h.LinkAdd(&netlink.Veth{LinkAttrs: attrs, PeerName: "probe1"}); err != nil {
			done <- fmt.Errorf("cannot create a veth pair: %w", err)
			return
		}
		done <- nil
	}()
	if err := <-done; err != nil {
		return fmt.Errorf("netlab unavailable: %w", err)
	}
	return nil
}
