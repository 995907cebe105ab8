//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package lockfile

import "os"

// tryLock has no flock(2) here: it reports a lock file with a PID in it as
// held (by a live process or, after a crash, by a dead one: remove the
// file then). Two runs starting at once may both take an empty one.
func tryLock(f *os.File) (held bool, err error) {
	st, err := f.Stat()
	if err != nil {
		return false, err
	}
	return st.Size() > 0, nil
}
