//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package lockfile

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// tryLock takes an exclusive flock(2) on f without waiting; held reports
// that another open file holds it.
func tryLock(f *os.File) (held bool, err error) {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		switch {
		case err == nil:
			return false, nil
		case errors.Is(err, unix.EWOULDBLOCK):
			return true, nil
		case errors.Is(err, unix.EINTR):
			continue
		default:
			return false, err
		}
	}
}
