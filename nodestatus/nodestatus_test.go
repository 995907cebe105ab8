package nodestatus

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 27, 14, 0, 0, 0, time.UTC)

// sample is a node's status after a round.
func sample() Status {
	return Status{
		Node: 1, Address: "127.0.0.2", Cluster: "/etc/chronosync/cluster.rpd", Nodes: 3,
		Reference: 0, ReferenceAddress: "127.0.0.1", PID: 4242, Started: t0.Add(-time.Hour),
		State:     StateOK,
		LastRound: Round{ID: 42, End: t0.Add(-800 * time.Millisecond), LatencyNS: 3.21e6},
		OffsetNS:  -1234.5, OffsetSigmaNS: 45, DriftPPM: 12.345, DriftSigmaPPM: 0.012,
		SelfCheck:  SelfCheck{Within: 11, Of: 12, Pass: true},
		ValidUntil: t0.Add(4 * time.Second),
		Peers: []Peer{
			{Node: 0, Address: "127.0.0.1", State: "ok", LastHeard: t0.Add(-300 * time.Millisecond), ProbesSent: 12000, ProbesLost: 3, EdgeSigmaNS: 61},
			{Node: 2, Address: "127.0.0.3", State: "lost", ProbesSent: 500, ProbesLost: 500, EdgeSigmaNS: 12300},
		},
	}
}

// TestRoundTrip: a server on a real socket answers the status it was
// last given, as of its clock (the round's age), a copy that the caller's
// later changes do not reach; the socket is 0600 and the directory it
// created 0700; Close removes the socket.
func TestRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	path := filepath.Join(dir, "node1.sock")
	s, err := Listen(path, Options{Now: func() time.Time { return t0 }, Initial: Status{Node: 1, PID: 4242}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for p, want := range map[string]os.FileMode{dir: 0o700 | os.ModeDir, path: 0o600 | os.ModeSocket} {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode(), want)
		}
	}

	got, err := Query(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != StateStarting || got.Node != 1 || got.PID != 4242 || got.Version != Version || !got.Now.Equal(t0) {
		t.Errorf("before Set: %+v, want state starting, node 1, pid 4242, now %v", got, t0)
	}

	st := sample()
	s.Set(st)
	st.Peers[0].ProbesSent = 1 // the caller's copy: not the server's
	got, err = Query(path)
	if err != nil {
		t.Fatal(err)
	}
	want := sample().at(t0)
	if gj, wj := mustJSON(t, got), mustJSON(t, want); gj != wj {
		t.Errorf("answer\n%s\nwant\n%s", gj, wj)
	}
	if got.LastRound.AgeNS != 8e8 {
		t.Errorf("age %v ns, want 8e8", got.LastRound.AgeNS)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Errorf("after Close: %v, want the socket removed", err)
	}
	if _, err := Query(path); err == nil || !strings.Contains(err.Error(), "no node serves it") {
		t.Errorf("query after Close: %v", err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSocketInUse: a second server on a live socket is refused, naming
// the node and pid that serve it, and the first keeps serving; a stale
// socket (its process gone: nothing accepts) is replaced; a file that is
// no socket, or a directory every user may write to, is refused.
func TestSocketInUse(t *testing.T) {
	dir := t.TempDir()
	t.Run("live", func(t *testing.T) {
		path := filepath.Join(dir, "live.sock")
		s, err := Listen(path, Options{Initial: Status{Node: 3, PID: 777}})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		_, err = Listen(path, Options{})
		if err == nil || !strings.Contains(err.Error(), "node 3 (pid 777) serves it already") {
			t.Fatalf("second Listen: %v, want it refused naming node 3 (pid 777)", err)
		}
		if st, err := Query(path); err != nil || st.Node != 3 {
			t.Errorf("the first server after the refusal: %+v, %v", st, err)
		}
	})
	t.Run("stale", func(t *testing.T) {
		path := filepath.Join(dir, "stale.sock")
		ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
		if err != nil {
			t.Fatal(err)
		}
		ln.SetUnlinkOnClose(false)
		ln.Close() // as a killed process leaves it
		if _, err := os.Lstat(path); err != nil {
			t.Fatalf("no stale socket left: %v", err)
		}
		s, err := Listen(path, Options{Initial: Status{Node: 5}})
		if err != nil {
			t.Fatalf("a stale socket not replaced: %v", err)
		}
		defer s.Close()
		if st, err := Query(path); err != nil || st.Node != 5 {
			t.Errorf("query: %+v, %v", st, err)
		}
	})
	t.Run("not a socket", func(t *testing.T) {
		path := filepath.Join(dir, "file.sock")
		if err := os.WriteFile(path, []byte("keep me"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Listen(path, Options{})
		if err == nil || !strings.Contains(err.Error(), "a file that is no socket is there") {
			t.Fatalf("Listen over a file: %v", err)
		}
		if b, _ := os.ReadFile(path); string(b) != "keep me" {
			t.Errorf("the file was changed: %q", b)
		}
	})
	t.Run("world-writable directory", func(t *testing.T) {
		open := filepath.Join(dir, "open")
		if err := os.Mkdir(open, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(open, 0o777); err != nil {
			t.Fatal(err)
		}
		_, err := Listen(filepath.Join(open, "n.sock"), Options{})
		if err == nil || !strings.Contains(err.Error(), "writable by every user") {
			t.Fatalf("Listen in a 0777 directory: %v", err)
		}
	})
	t.Run("path too long", func(t *testing.T) {
		_, err := Listen("/tmp/"+strings.Repeat("x", 120), Options{})
		if err == nil || !strings.Contains(err.Error(), "takes at most 107") {
			t.Fatalf("Listen on a long path: %v", err)
		}
	})
}

// TestStale: once the model's validity deadline has passed with no new
// round, the server answers stale, saying since when, whatever the node
// last set.
func TestStale(t *testing.T) {
	now := t0.Add(10 * time.Second) // past ValidUntil (t0+4s)
	s, err := Listen(filepath.Join(t.TempDir(), "n.sock"), Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Set(sample())
	st, err := Query(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	want := "no round since round 42, 10.800 s ago: the model was valid until 2026-11-27T14:00:04Z"
	if st.State != StateStale || st.Reason != want {
		t.Errorf("state %s: %s\nwant stale: %s", st.State, st.Reason, want)
	}
}

// TestBadRequest: a request other than "status" gets an error answer
// (which Query would return), and the server goes on answering.
func TestBadRequest(t *testing.T) {
	s, err := Listen(filepath.Join(t.TempDir(), "n.sock"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, req := range []string{"hello\n", strings.Repeat("x", 100) + "\n"} {
		c, err := net.Dial("unix", s.Path())
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, req)
		b, _ := io.ReadAll(c)
		c.Close()
		var ans map[string]string
		if err := json.Unmarshal(b, &ans); err != nil || ans["error"] == "" {
			t.Errorf("request %.10q: answer %q, want {\"error\": ...}", req, b)
		}
	}
	if _, err := Query(s.Path()); err != nil {
		t.Errorf("after bad requests: %v", err)
	}
}

// TestFormat: the report reads like chronyc tracking: aligned "Name :
// value" lines, then the peers table.
func TestFormat(t *testing.T) {
	st := sample().at(t0)
	var b bytes.Buffer
	if err := Format(&b, &st); err != nil {
		t.Fatal(err)
	}
	want := `Node            : 1 (127.0.0.2) of 3, pid 4242
Cluster         : /etc/chronosync/cluster.rpd
Reference node  : 0 (127.0.0.1)
Status          : ok
Last round      : 42 at 2026-11-27 13:59:59.200, 0.800 seconds ago
Round latency   : 0.003210 seconds
Offset          : -0.000001234 seconds (global time minus local), sigma 0.000000045 seconds
Drift           : +12.345 ppm, sigma 0.012 ppm
Self-check      : 11 of 12 within 3 sigma, pass
Valid until     : 2026-11-27 14:00:04.000 (in 4.0 seconds)
Up              : 1h0m0s

Node  Address    State  Last heard  Sent   Lost  Loss     Edge sigma
0     127.0.0.1  ok     0.3s ago    12000  3     0.03%    61ns
2     127.0.0.3  lost   never       500    500   100.00%  12.3us
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// TestSDNotify: with Notify and $NOTIFY_SOCKET, the server tells systemd
// READY=1 once it answers, a STATUS= line at every Set and STOPPING=1 at
// Close; SDNotify sends nothing without the variable.
func TestSDNotify(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "notify")
	ln, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if sent, err := SDNotify(func(string) string { return "" }, "READY=1"); sent || err != nil {
		t.Fatalf("without NOTIFY_SOCKET: sent %v, %v", sent, err)
	}
	t.Setenv(EnvNotifySocket, sock)
	s, err := Listen(filepath.Join(dir, "n.sock"), Options{Notify: true, Initial: Status{Node: 1}})
	if err != nil {
		t.Fatal(err)
	}
	s.Set(sample())
	s.Close()
	want := []string{
		"READY=1\nSTATUS=node 1: starting, no round yet",
		"STATUS=node 1: ok, round 42, offset -1234 ns (sigma 45 ns), self-check 11/12",
		"STOPPING=1",
	}
	buf := make([]byte, 512)
	for _, w := range want {
		ln.SetReadDeadline(time.Now().Add(2 * time.Second))
		n, err := ln.Read(buf)
		if err != nil {
			t.Fatalf("waiting for %q: %v", w, err)
		}
		if string(buf[:n]) != w {
			t.Errorf("got %q, want %q", buf[:n], w)
		}
	}
}

// TestDefaultDir: $CHRONOSYNC_STATE_DIR, else /run/chronosync for root,
// else $XDG_RUNTIME_DIR/chronosync; a socket path names the rank.
func TestDefaultDir(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tc := range []struct {
		env  map[string]string
		euid int
		want string
	}{
		{map[string]string{"CHRONOSYNC_STATE_DIR": "/srv/cs", "XDG_RUNTIME_DIR": "/run/user/1000"}, 0, "/srv/cs/node3.sock"},
		{map[string]string{"XDG_RUNTIME_DIR": "/run/user/1000"}, 0, "/run/chronosync/node3.sock"},
		{map[string]string{"XDG_RUNTIME_DIR": "/run/user/1000"}, 99999, "/run/user/1000/chronosync/node3.sock"},
		{map[string]string{}, 99999, filepath.Join(os.TempDir(), "chronosync-99999", "node3.sock")},
	} {
		if got := DefaultPath(3, env(tc.env), tc.euid); got != tc.want {
			t.Errorf("DefaultPath(3, %v, euid %d) = %s, want %s", tc.env, tc.euid, got, tc.want)
		}
	}
}

// TestSetWhileQueried: the node sets a new status again and again while
// a client asks 300 times; every answer is one whole snapshot (its round
// id, offset and peers from one Set), never a mix, and the answers follow
// the rounds.
func TestSetWhileQueried(t *testing.T) {
	s, err := Listen(filepath.Join(t.TempDir(), "n.sock"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		st := sample()
		for id := uint64(1); ; id++ {
			select {
			case <-stop:
				return
			default:
			}
			st.LastRound.ID, st.OffsetNS = id, float64(id)
			for i := range st.Peers {
				st.Peers[i].ProbesSent = id
			}
			s.Set(st) // st is reused: Set must copy
		}
	}()
	defer func() { close(stop); <-done }()
	seen := map[uint64]bool{}
	for range 300 {
		got, err := Query(s.Path())
		if err != nil {
			t.Fatal(err)
		}
		id := got.LastRound.ID
		seen[id] = true
		if id != 0 && (got.OffsetNS != float64(id) || got.Peers[0].ProbesSent != id || got.Peers[1].ProbesSent != id) {
			t.Fatalf("torn snapshot: round %d, offset %v, peers' probes %d, %d", id, got.OffsetNS, got.Peers[0].ProbesSent, got.Peers[1].ProbesSent)
		}
	}
	if len(seen) < 2 {
		t.Errorf("300 answers saw %d round ids: the answers do not follow Set", len(seen))
	}
}

// BenchmarkSet is the node's cost per round of publishing its status.
func BenchmarkSet(b *testing.B) {
	s, err := Listen(filepath.Join(b.TempDir(), "n.sock"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	st := sample()
	b.ReportAllocs()
	for b.Loop() {
		s.Set(st)
	}
}

// BenchmarkQuery is one `chronosync status` query's round trip.
func BenchmarkQuery(b *testing.B) {
	s, err := Listen(filepath.Join(b.TempDir(), "n.sock"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	s.Set(sample())
	for b.Loop() {
		if _, err := Query(s.Path()); err != nil {
			b.Fatal(err)
		}
	}
}
