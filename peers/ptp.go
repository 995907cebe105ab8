package peers

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// PTPConfig describes a ptp4l master and slave pair on one link.
type PTPConfig struct {
	MasterNS, MasterIface string // the master's namespace and interface
	SlaveNS, SlaveIface   string // the slave's namespace and interface
	// LogSyncInterval is the Sync (and Delay_Req) interval, log2 seconds,
	// -7..0. Under free_running ptp4l reports one offset per second at
	// most, the measurement of the Sync of that moment, whatever this is.
	LogSyncInterval int
	// Dir is an existing directory that receives the master/ and slave/
	// directories with each daemon's configuration, management socket and
	// output (ptp4l.out).
	Dir string
	// Ptp4l is the ptp4l binary; empty means "ptp4l" on $PATH.
	Ptp4l string
}

// StartPTP starts ptp4l as master and as slave (slaveOnly) with software
// timestamping over UDP/IPv4 and free_running 1, and waits until both
// listen. The slave's samples are its "master offset" lines; the master has
// none. The caller must Stop both.
func StartPTP(cfg PTPConfig) (master, slave Daemon, err error) {
	switch {
	case cfg.MasterNS == "" || cfg.SlaveNS == "" || cfg.MasterIface == "" || cfg.SlaveIface == "":
		return nil, nil, errors.New("peers: ptp4l: both namespaces and interfaces are required")
	case cfg.LogSyncInterval < -7 || cfg.LogSyncInterval > 0:
		return nil, nil, fmt.Errorf("peers: ptp4l: LogSyncInterval %d outside -7..0", cfg.LogSyncInterval)
	case cfg.Dir == "":
		return nil, nil, errors.New("peers: ptp4l: Dir is required")
	}
	m, err := startPtp4l("ptp4l (master)", cfg, "master", cfg.MasterNS, cfg.MasterIface)
	if err != nil {
		return nil, nil, err
	}
	s, err := startPtp4l("ptp4l (slave)", cfg, "slave", cfg.SlaveNS, cfg.SlaveIface, "-s")
	if err != nil {
		return nil, nil, errors.Join(err, m.Stop())
	}
	return m, s, nil
}

// ptpConf is a ptp4l configuration for a daemon whose files are in dir.
// summary_interval at the sync interval makes ptp4l print each offset
// rather than a summary of several.
func ptpConf(cfg PTPConfig, dir string) string {
	return fmt.Sprintf(`[global]
free_running 1
logSyncInterval %[1]d
logMinDelayReqInterval %[1]d
summary_interval %[1]d
freq_est_interval 0
logAnnounceInterval -2
uds_address %[2]s/ptp4l.sock
`, cfg.LogSyncInterval, dir)
}

// startPtp4l writes role's configuration into cfg.Dir/role and starts ptp4l
// on iface in namespace ns.
func startPtp4l(name string, cfg PTPConfig, role, ns, iface string, extra ...string) (*ptp4l, error) {
	dir := filepath.Join(cfg.Dir, role)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("peers: %s: %w", name, err)
	}
	confPath := filepath.Join(dir, "ptp4l.conf")
	if err := os.WriteFile(confPath, []byte(ptpConf(cfg, dir)), 0o600); err != nil {
		return nil, fmt.Errorf("peers: %s: %w", name, err)
	}
	bin := cfg.Ptp4l
	if bin == "" {
		bin = "ptp4l"
	}
	// -S: software timestamps; -4: UDP/IPv4; -m: messages to stdout;
	// -q: not to syslog.
	argv := append([]string{bin, "-f", confPath, "-i", iface, "-S", "-4", "-m", "-q"}, extra...)
	d := &ptp4l{}
	p, err := startInNS(name, ns, filepath.Join(dir, "ptp4l.out"), d, argv...)
	if err != nil {
		return nil, fmt.Errorf("peers: %w", err)
	}
	d.process = p
	if err := p.waitReady(d.listening); err != nil {
		return nil, fmt.Errorf("peers: %w", err)
	}
	return d, nil
}

// ptp4l is a running ptp4l. It is the io.Writer of the daemon's output,
// which it parses line by line as it comes.
type ptp4l struct {
	*process

	mu        sync.Mutex
	partial   []byte // an incomplete last line
	ready     bool   // a port has reached LISTENING
	samples   []Sample
	malformed int
}

// Write collects complete lines of ptp4l's output.
func (d *ptp4l) Write(b []byte) (int, error) {
	now := time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.partial = append(d.partial, b...)
	for {
		i := bytes.IndexByte(d.partial, '\n')
		if i < 0 {
			break
		}
		d.line(string(d.partial[:i]), now)
		d.partial = d.partial[i+1:]
	}
	return len(b), nil
}

// line takes one line of output; d.mu is held.
func (d *ptp4l) line(line string, at time.Time) {
	if strings.Contains(line, " to LISTENING ") {
		d.ready = true
	}
	r, report, ok := parsePTPLine(line)
	switch {
	case !report:
	case ok:
		d.samples = append(d.samples, Sample{At: at, OffsetNS: float64(r.offsetNS)})
	default:
		d.malformed++
	}
}

func (d *ptp4l) listening() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.ready
}

// Samples returns a copy of the offsets read so far.
func (d *ptp4l) Samples() ([]Sample, int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]Sample(nil), d.samples...), d.malformed, nil
}
