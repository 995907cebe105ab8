package peers

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
)

// ChronyConfig describes a chrony server and client pair.
type ChronyConfig struct {
	ServerNS string // network namespace of the server
	// ServerAddr is the server's IP address in ServerNS, which the client
	// polls.
	ServerAddr netip.Addr
	ClientNS   string // network namespace of the client
	// Poll is the client's polling interval, log2 seconds, used as both
	// minpoll and maxpoll: -6 (1/64 s) to -4 (1/16 s) for dense samples.
	// The zero value means 1 s.
	Poll int
	// XLeave selects chrony's interleaved mode, in which the server's
	// kernel transmit timestamps reach the client.
	XLeave bool
	// Dir is an existing directory, accessible to root only (chronyd
	// refuses a command socket in a directory others can reach), that
	// receives the server/ and client/ directories with each daemon's
	// configuration, pid file, command socket, drift file and logs.
	Dir string
	// Chronyd is the chronyd binary; empty means "chronyd" on $PATH.
	Chronyd string
}

// StartChrony starts a chrony server, which serves its own clock (`local
// stratum 1`), and a client of it, both with -x, and waits until both run.
// The client's samples are read from its tracking.log: at each clock update,
// the system clock's offset from the server as chronyd then estimates it
// (the log's Offset minus Rem. corr., what `chronyc tracking` calls System
// time), not the Offset column alone, which is relative to chronyd's own
// virtual clock. The server has none. The caller must Stop both.
func StartChrony(cfg ChronyConfig) (server, client Daemon, err error) {
	if err := cfg.validate(); err != nil {
		return nil, nil, err
	}
	srv, err := startChronyd("chronyd (server)", cfg, "server", serverConf)
	if err != nil {
		return nil, nil, err
	}
	cli, err := startChronyd("chronyd (client)", cfg, "client", clientConf)
	if err != nil {
		return nil, nil, errors.Join(err, srv.Stop())
	}
	return srv, cli, nil
}

func (c ChronyConfig) validate() error {
	switch {
	case c.ServerNS == "" || c.ClientNS == "":
		return errors.New("peers: chrony: ServerNS and ClientNS are required")
	case !c.ServerAddr.IsValid():
		return errors.New("peers: chrony: ServerAddr is required")
	case c.Poll < -6 || c.Poll > 10:
		return fmt.Errorf("peers: chrony: Poll %d outside -6..10", c.Poll)
	case c.Dir == "":
		return errors.New("peers: chrony: Dir is required")
	}
	return nil
}

// chronyd is a running chronyd whose samples are in its tracking.log.
type chronyd struct {
	*process
	trackingLog string
}

// Samples parses the tracking log written so far.
func (c *chronyd) Samples() ([]Sample, int, error) {
	b, err := os.ReadFile(c.trackingLog)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, nil // no clock update yet
	}
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", c.name, err)
	}
	samples, malformed := parseTracking(string(b))
	return samples, malformed, nil
}

// startChronyd writes role's configuration into cfg.Dir/role and starts
// chronyd on it in role's namespace.
func startChronyd(name string, cfg ChronyConfig, role string, conf func(ChronyConfig, string) string) (*chronyd, error) {
	dir := filepath.Join(cfg.Dir, role)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("peers: %s: %w", name, err)
	}
	confPath := filepath.Join(dir, "chrony.conf")
	if err := os.WriteFile(confPath, []byte(conf(cfg, dir)), 0o600); err != nil {
		return nil, fmt.Errorf("peers: %s: %w", name, err)
	}
	ns := cfg.ClientNS
	if role == "server" {
		ns = cfg.ServerNS
	}
	bin := cfg.Chronyd
	if bin == "" {
		bin = "chronyd"
	}
	// -x: never touch the clock; -d: stay in the foreground, log to
	// stderr; -u root: keep root, which owns dir.
	p, err := startInNS(name, ns, filepath.Join(dir, "chronyd.out"), nil,
		bin, "-x", "-d", "-u", "root", "-f", confPath)
	if err != nil {
		return nil, fmt.Errorf("peers: %w", err)
	}
	sock := filepath.Join(dir, "chronyd.sock")
	if err := p.waitReady(func() bool { _, err := os.Stat(sock); return err == nil }); err != nil {
		return nil, fmt.Errorf("peers: %w", err)
	}
	return &chronyd{process: p, trackingLog: filepath.Join(dir, "tracking.log")}, nil
}

// commonConf is the part of both configurations that keeps every file of
// chronyd's in dir and disables the UDP command port.
func commonConf(dir string) string {
	return fmt.Sprintf(`pidfile %[1]s/chronyd.pid
bindcmdaddress %[1]s/chronyd.sock
cmdport 0
driftfile %[1]s/drift
logdir %[1]s
log tracking
logbanner 0
`, dir)
}

// serverConf serves the server's own clock to anyone in its namespace.
func serverConf(_ ChronyConfig, dir string) string {
	return commonConf(dir) + "local stratum 1\nallow\n"
}

// clientConf polls the server and serves no one (port 0).
func clientConf(cfg ChronyConfig, dir string) string {
	var b strings.Builder
	b.WriteString(commonConf(dir))
	b.WriteString("port 0\n")
	fmt.Fprintf(&b, "server %s iburst minpoll %d maxpoll %d", cfg.ServerAddr, cfg.Poll, cfg.Poll)
	if cfg.XLeave {
		b.WriteString(" xleave")
	}
	b.WriteString("\n")
	return b.String()
}
