package nodestatus

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Limits of the server.
const (
	// MaxPath is the longest socket path a Unix socket takes (sun_path,
	// less its terminating NUL).
	MaxPath = 107
	// maxRequest bounds a request line.
	maxRequest = 64
	// maxConns bounds the queries answered at once; more are closed.
	maxConns = 16
	// connTimeout bounds one query's exchange.
	connTimeout = 2 * time.Second
)

// Options are a Server's settings; the zero value will do.
type Options struct {
	// Logger receives the server's log (nil: none).
	Logger *slog.Logger
	// Initial is the status answered before the first Set; its State
	// defaults to StateStarting.
	Initial Status
	// Now replaces the wall clock (tests).
	Now func() time.Time
	// Notify tells systemd (a unit of Type=notify, $NOTIFY_SOCKET) that
	// the node is ready once the socket answers, its status line (STATUS=,
	// which systemctl status shows) at every Set, and that it is stopping
	// at Close. Without $NOTIFY_SOCKET nothing is sent.
	Notify bool
}

// Server answers status queries on a Unix socket with the latest Status
// it was given. Its methods may be called from any goroutine.
type Server struct {
	path     string
	ln       *net.UnixListener
	ino      uint64 // the socket file's inode, to remove only our own
	log      *slog.Logger
	now      func() time.Time
	notifyOn bool

	mu sync.Mutex
	st Status

	sem  chan struct{}
	wg   sync.WaitGroup
	done chan struct{}
	once sync.Once
}

// Listen creates the socket at path and starts answering on it from its
// own goroutine until Close. The socket is mode 0600 (its owner and root
// only); its directory is created, mode 0700, when missing, and an existing
// one must not be writable by others unless sticky. A socket left at path
// by a process that died (nothing accepts on it) is replaced; one that a
// live process serves is refused, naming its node and pid when it answers;
// a file that is no socket is never replaced.
func Listen(path string, opts Options) (*Server, error) {
	if len(path) > MaxPath {
		return nil, fmt.Errorf("status socket %s: the path is %d bytes; a Unix socket's path takes at most %d", path, len(path), MaxPath)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	if err := ensureDir(filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("status socket %s: %w", path, err)
	}
	if err := clearStale(path, log); err != nil {
		return nil, err
	}
	// Bind under a temporary name, make it owner-only, then rename it into
	// place, so that the socket is never reachable at path with the
	// umask's mode.
	tmp := filepath.Join(filepath.Dir(path), fmt.Sprintf(".%s.%d.tmp", filepath.Base(path), os.Getpid()))
	_ = os.Remove(tmp)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: tmp, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("status socket %s: %w", path, err)
	}
	ln.SetUnlinkOnClose(false)
	fail := func(err error) (*Server, error) {
		ln.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("status socket %s: %w", path, err)
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fail(err)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return fail(err)
	}
	s := &Server{path: path, ln: ln, log: log, now: now, notifyOn: opts.Notify, st: opts.Initial.Clone(), sem: make(chan struct{}, maxConns), done: make(chan struct{})}
	if s.st.State == "" {
		s.st.State = StateStarting
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.ino = st.Ino
	}
	s.wg.Add(1)
	go s.serve()
	log.Info("status socket listening", "path", path)
	s.notify("READY=1\n" + notifyLine(&s.st))
	return s, nil
}

// ensureDir makes dir, mode 0700, when it is missing, and refuses one that
// others may write to (unless sticky, as /tmp is) or that is no directory.
func ensureDir(dir string) error {
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("create its directory: %w", err)
		}
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if fi.Mode().Perm()&0o002 != 0 && fi.Mode()&fs.ModeSticky == 0 {
		return fmt.Errorf("directory %s is writable by every user (mode %v) and not sticky: anyone could replace the socket; use a directory of the node's user (mode 0700)", dir, fi.Mode().Perm())
	}
	return nil
}

// clearStale removes a socket at path that nothing accepts on (its server
// died), and refuses a live one or a file that is no socket.
func clearStale(path string, log *slog.Logger) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("status socket %s: %w", path, err)
	}
	if fi.Mode()&fs.ModeSocket == 0 {
		return fmt.Errorf("status socket %s: a file that is no socket is there (mode %v); not replacing it", path, fi.Mode())
	}
	c, err := net.DialTimeout("unix", path, time.Second)
	if err == nil {
		c.Close()
		who := "a live process"
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if st, qerr := QueryContext(ctx, path); qerr == nil {
			who = fmt.Sprintf("node %d (pid %d)", st.Node, st.PID)
		}
		return fmt.Errorf("status socket %s: %s serves it already: one node per socket: stop it, or give this node another socket path (or CHRONOSYNC_STATE_DIR)", path, who)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("status socket %s: exists, and cannot tell whether it is live: %w", path, err)
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("status socket %s: remove the stale socket: %w", path, err)
	}
	log.Info("replaced a stale status socket (its server is gone)", "path", path)
	return nil
}

// Path is the socket's path.
func (s *Server) Path() string { return s.path }

// Set makes st the status that queries get from now on; it is copied, so
// the caller may reuse st.
func (s *Server) Set(st Status) {
	st = st.Clone()
	s.mu.Lock()
	s.st = st
	s.mu.Unlock()
	if s.notifyOn {
		s.notify(notifyLine(&st))
	}
}

// snapshot is the status answered now.
func (s *Server) snapshot() Status {
	s.mu.Lock()
	st := s.st.Clone()
	s.mu.Unlock()
	return st.at(s.now())
}

// serve accepts queries until Close.
func (s *Server) serve() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			select {
			case <-s.done:
				return
			default:
			}
			s.log.Warn("status socket: accept", "err", err)
			time.Sleep(10 * time.Millisecond)
			continue
		}
		select {
		case s.sem <- struct{}{}:
		default:
			s.log.Warn("status socket: too many queries at once; closing one", "max", maxConns)
			c.Close()
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() { <-s.sem }()
			s.answer(c)
		}()
	}
}

// answer reads one request from c and writes its answer.
func (s *Server) answer(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(connTimeout))
	r := bufio.NewReaderSize(c, maxRequest)
	line, err := r.ReadSlice('\n')
	req := strings.TrimSpace(string(line))
	enc := json.NewEncoder(c)
	switch {
	case err != nil:
		s.log.Debug("status socket: bad request", "err", err)
		_ = enc.Encode(map[string]string{"error": fmt.Sprintf("expected the request line \"status\\n\" within %d bytes and %v: %v", maxRequest, connTimeout, err)})
	case req == "status":
		st := s.snapshot()
		if err := enc.Encode(st); err != nil {
			s.log.Debug("status socket: write", "err", err)
		}
	default:
		_ = enc.Encode(map[string]string{"error": fmt.Sprintf("unknown request %q: expected \"status\"", req)})
	}
}

// Close stops answering, waits for the queries in progress and removes the
// socket (if it is still this server's).
func (s *Server) Close() error {
	var err error
	s.once.Do(func() {
		s.notify("STOPPING=1")
		close(s.done)
		err = s.ln.Close()
		s.wg.Wait()
		if fi, serr := os.Lstat(s.path); serr == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Ino == s.ino {
				if rerr := os.Remove(s.path); rerr != nil && err == nil {
					err = rerr
				}
			}
		}
		if err != nil {
			err = fmt.Errorf("close status socket %s: %w", s.path, err)
		}
	})
	return err
}
