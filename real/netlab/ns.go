//go:build linux

package netlab

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// nsDir is where named network namespaces are bind-mounted, as by
// `ip netns add` (/var/run is a link to /run).
const nsDir = "/run/netns"

// inNS runs f on a fresh goroutine locked to its OS thread after moving
// that thread into ns (called name in errors), and waits for it. The
// thread goes back to its namespace afterwards and is unlocked; if going
// back fails it stays locked, so the runtime discards it when the
// goroutine exits. A panic in f is re-raised in the caller.
func inNS(ns netns.NsHandle, name string, f func() error) error {
	type result struct {
		err      error
		panicked bool
		panicVal any
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		var res result
		defer func() { done <- res }()
		orig, err := netns.Get()
		if err != nil {
			runtime.UnlockOSThread()
			res.err = fmt.Errorf("netlab: get the thread's namespace: %w", err)
			return
		}
		defer orig.Close()
		if err := netns.Set(ns); err != nil {
			// setns failed, so the thread is still where it was.
			runtime.UnlockOSThread()
			res.err = fmt.Errorf("netlab: enter namespace %s: %w", name, err)
			return
		}
		func() {
			defer func() {
				if p := recover(); p != nil {
					res.panicked, res.panicVal = true, p
				}
			}()
			res.err = f()
		}()
		if err := netns.Set(orig); err != nil {
			res.err = errors.Join(res.err, fmt.Errorf("netlab: leave namespace %s (thread discarded): %w", name, err))
			return // still locked: the thread dies with the goroutine
		}
		runtime.UnlockOSThread()
	}()
	res := <-done
	if res.panicked {
		panic(res.panicVal)
	}
	return res.err
}

// newNamedNS creates the network namespace name, bind-mounted at
// nsDir/name, and returns an open handle to it. It claims the name first
// (O_EXCL), so it fails with fs.ErrExist, touching nothing, when the name
// is taken. setup, if not nil, runs on a thread inside the new namespace
// before the handle is returned; that thread is then discarded. On error
// nothing is left behind.
func newNamedNS(name string, setup func() error) (netns.NsHandle, error) {
	if err := prepareNSDir(); err != nil {
		return netns.None(), fmt.Errorf("netlab: create namespace %s: %w", name, err)
	}
	path := filepath.Join(nsDir, name)
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return netns.None(), fmt.Errorf("netlab: create namespace %s: %w", name, err)
	}
	f.Close()

	type result struct {
		ns  netns.NsHandle
		err error
	}
	done := make(chan result, 1)
	go func() {
		// Never unlocked: the thread, moved into the new namespace, is
		// discarded when this goroutine returns.
		runtime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			done <- result{err: fmt.Errorf("unshare: %w", err)}
			return
		}
		self := fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid())
		if err := unix.Mount(self, path, "none", unix.MS_BIND, ""); err != nil {
			done <- result{err: fmt.Errorf("bind-mount %s: %w", path, err)}
			return
		}
		ns, err := netns.GetFromPath(path)
		if err != nil {
			done <- result{err: err}
			return
		}
		if setup != nil {
			if err := setup(); err != nil {
				ns.Close()
				done <- result{err: err}
				return
			}
		}
		done <- result{ns: ns}
	}()
	res := <-done
	if res.err != nil {
		_ = unix.Unmount(path, unix.MNT_DETACH)
		_ = os.Remove(path)
		return netns.None(), fmt.Errorf("netlab: create namespace %s: %w", name, res.err)
	}
	return res.ns, nil
}

// prepareNSDir makes nsDir a shared mount point, as `ip netns add` does
// (iproute2's netns_add): the namespaces' bind mounts then propagate to
// mount namespaces made later (`ip netns exec`), and a later `ip netns
// add`, finding a mount point, never bind-mounts nsDir over itself while
// this process holds mounts under it.
func prepareNSDir() error {
	if err := os.MkdirAll(nsDir, 0o755); err != nil {
		return err
	}
	for made := false; ; made = true {
		err := unix.Mount("", nsDir, "none", unix.MS_SHARED|unix.MS_REC, "")
		if err == nil {
			return nil
		}
		if err != unix.EINVAL || made {
			return fmt.Errorf("make %s a shared mount: %w", nsDir, err)
		}
		// EINVAL: not a mount point yet; make it one.
		if err := unix.Mount(nsDir, nsDir, "none", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind-mount %s on itself: %w", nsDir, err)
		}
	}
}

// deleteNamedNS unmounts and removes nsDir/name. A file that is not
// mounted (left by a crash between claiming the name and mounting) is
// removed too; a name that does not exist is not an error. The namespace
// itself goes away once no process, socket or handle holds it.
func deleteNamedNS(name string) error {
	path := filepath.Join(nsDir, name)
	// Unmount until the path is no mount point (EINVAL): a mount may be
	// stacked on another when nsDir was bind-mounted over itself by
	// someone else meanwhile.
	for range 8 {
		err := unix.Unmount(path, unix.MNT_DETACH)
		if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOENT) {
			break
		}
		if err != nil {
			return fmt.Errorf("netlab: delete namespace %s: unmount: %w", name, err)
		}
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("netlab: delete namespace %s: %w", name, err)
	}
	return nil
}

// disableIPv6 turns IPv6 off in the calling thread's namespace (for the
// interfaces that exist and those to come), so that no DAD, router
// solicitation or MLD frame appears on the lab's links. A kernel without
// IPv6 needs nothing.
func disableIPv6() error {
	for _, conf := range []string{"all", "default"} {
		p := "/proc/sys/net/ipv6/conf/" + conf + "/disable_ipv6"
		if err := os.WriteFile(p, []byte("1"), 0); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return fmt.Errorf("disable IPv6: %w", err)
		}
	}
	return nil
}
