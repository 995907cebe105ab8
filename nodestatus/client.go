package nodestatus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// Limits of the client.
const (
	// QueryTimeout bounds Query's exchange.
	QueryTimeout = 5 * time.Second
	// MaxAnswer bounds an answer's size.
	MaxAnswer = 4 << 20
)

// Query asks the node serving the socket at path for its status, within
// QueryTimeout.
func Query(path string) (*Status, error) {
	ctx, cancel := context.WithTimeout(context.Background(), QueryTimeout)
	defer cancel()
	return QueryContext(ctx, path)
}

// QueryContext is Query within ctx.
func QueryContext(ctx context.Context, path string) (*Status, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("query %s: no node serves it (no such socket): is the node running, and is this its socket (chronosync status --socket PATH)?", path)
		}
		return nil, fmt.Errorf("query %s: %w", path, err)
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Now()) })
	defer stop()
	if _, err := io.WriteString(c, "status\n"); err != nil {
		return nil, fmt.Errorf("query %s: send the request: %w", path, err)
	}
	data, err := io.ReadAll(io.LimitReader(c, MaxAnswer+1))
	if err != nil {
		return nil, fmt.Errorf("query %s: read the answer: %w", path, err)
	}
	if len(data) > MaxAnswer {
		return nil, fmt.Errorf("query %s: the answer is over %d bytes (MaxAnswer)", path, MaxAnswer)
	}
	var ans struct {
		Status
		Error string `json:"error"`
	}
	if err := json.Unmarshal(data, &ans); err != nil {
		return nil, fmt.Errorf("query %s: the answer (%d bytes) is no status JSON: %w", path, len(data), err)
	}
	if ans.Error != "" {
		return nil, fmt.Errorf("query %s: the node answered: %s", path, ans.Error)
	}
	st := ans.Status
	return &st, nil
}

// EnvStateDir names the node's state directory, which holds its status
// socket (and its host lock: harness.DefaultStateDir reads it too).
const EnvStateDir = "CHRONOSYNC_STATE_DIR"

// RunDir is the systemd unit's RuntimeDirectory, the nodes' state
// directory for root and for the user that owns it.
const RunDir = "/run/chronosync"

// DefaultDir is the directory of nodes' status sockets: $CHRONOSYNC_STATE_DIR
// when set, else /run/chronosync for root or the user who owns it (the
// systemd unit's RuntimeDirectory), else $XDG_RUNTIME_DIR/chronosync, else
// chronosync-<uid> in the temporary directory.
func DefaultDir(getenv func(string) string, euid int) string {
	if d := getenv(EnvStateDir); d != "" {
		return d
	}
	if euid == 0 {
		return RunDir
	}
	if fi, err := os.Stat(RunDir); err == nil && fi.IsDir() {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) == euid {
			return RunDir
		}
	}
	if d := getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "chronosync")
	}
	return filepath.Join(os.TempDir(), "chronosync-"+strconv.Itoa(euid))
}

// DefaultPath is the status socket of the node of rank rank: node<N>.sock
// in DefaultDir.
func DefaultPath(rank int, getenv func(string) string, euid int) string {
	return filepath.Join(DefaultDir(getenv, euid), fmt.Sprintf("node%d.sock", rank))
}

// Find returns the one node socket (node*.sock) in dir, for a status query
// that names no node; an error when there is none or several.
func Find(dir string) (string, error) {
	m, err := filepath.Glob(filepath.Join(dir, "node*.sock"))
	if err != nil {
		return "", fmt.Errorf("find status sockets in %s: %w", dir, err)
	}
	switch len(m) {
	case 0:
		return "", fmt.Errorf("no node's status socket in %s (node<N>.sock): is a node running as this user? give --socket PATH, or --cluster FILE and --rank N", dir)
	case 1:
		return m[0], nil
	}
	return "", fmt.Errorf("%d nodes' status sockets in %s (%s, ...): say which with --socket PATH or --rank N", len(m), dir, filepath.Base(m[0]))
}
