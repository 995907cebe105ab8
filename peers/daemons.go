package peers

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/chronosync/chronosync/harness"
	"github.com/chronosync/chronosync/real/netlab"
	"github.com/chronosync/chronosync/scenario"
)

// The daemons' rates in Compare: chrony polls every 1/16 s and ptp4l sends
// Sync and Delay_Req every 1/16 s, as in this package's own tests.
const (
	comparePoll    = -4
	compareLogSync = -4
)

// networkLog is the file of a daemon run's directory that receives the
// network's log; its presence marks the directory as Compare's.
const networkLog = "network.log"

// daemonRun is one reference daemon pair that Compare runs.
type daemonRun struct {
	tool string
	bin  string // the binary that must be on $PATH
	// start starts the pair between nodes 0 and 1 of lab, in dir.
	start func(lab *netlab.Lab, dir string) (server, client Daemon, err error)
}

// daemons returns the daemon pairs in the order Compare runs them.
func daemons() []daemonRun {
	chrony := func(xleave bool) func(*netlab.Lab, string) (Daemon, Daemon, error) {
		return func(lab *netlab.Lab, dir string) (Daemon, Daemon, error) {
			return StartChrony(ChronyConfig{
				ServerNS: lab.NodeNS(0), ServerAddr: lab.Addr(0), ClientNS: lab.NodeNS(1),
				Poll: comparePoll, XLeave: xleave, Dir: dir,
			})
		}
	}
	return []daemonRun{
		{ToolChronyBasic, "chronyd", chrony(false)},
		{ToolChronyXLeave, "chronyd", chrony(true)},
		{ToolPTP4l, "ptp4l", func(lab *netlab.Lab, dir string) (Daemon, Daemon, error) {
			return StartPTP(PTPConfig{
				MasterNS: lab.NodeNS(0), MasterIface: netlab.NodeIf,
				SlaveNS: lab.NodeNS(1), SlaveIface: netlab.NodeIf,
				LogSyncInterval: compareLogSync, Dir: dir,
			})
		}},
	}
}

// runDaemon runs d for dur on a fresh network of sc, its files in dir, and
// summarises the client's samples after the warm-up. The daemons are
// stopped and the network removed before it returns, whatever happened.
func runDaemon(ctx context.Context, sc *scenario.Scenario, d daemonRun, dir string, dur time.Duration) (_ Row, err error) {
	row := Row{Scenario: sc.Name, Tool: d.tool}
	if sc.Nodes > 2 {
		row.Note = "nodes 0-1 only"
	}
	if _, err := exec.LookPath(d.bin); err != nil {
		row.Note = NotInstalled
		return row, nil
	}
	if err := freshDir(dir); err != nil {
		return row, err
	}
	logFile, err := os.Create(filepath.Join(dir, networkLog))
	if err != nil {
		return row, fmt.Errorf("network log: %w", err)
	}
	defer logFile.Close()
	net, err := harness.StartNetwork(sc, logFile)
	if err != nil {
		return row, fmt.Errorf("start network: %w", err)
	}
	defer func() {
		if cerr := net.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("remove network %s: %w", net.Lab().Prefix(), cerr))
		}
	}()

	start := time.Now()
	server, client, err := d.start(net.Lab(), dir)
	if err != nil {
		return row, err
	}
	stopped := false
	stop := func() error {
		stopped = true
		return errors.Join(client.Stop(), server.Stop())
	}
	defer func() {
		if !stopped {
			err = errors.Join(err, stop())
		}
	}()

	timer := time.NewTimer(dur)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return row, fmt.Errorf("interrupted: %w", context.Cause(ctx))
	case <-timer.C:
	}
	samples, malformed, err := client.Samples()
	if err != nil {
		return row, err
	}
	if err := stop(); err != nil {
		return row, err
	}
	if malformed > 0 {
		fmt.Fprintf(logFile, "peers: %s: %d malformed report lines skipped\n", d.tool, malformed)
	}
	note := row.Note
	row = SampleRow(sc.Name, d.tool, samples, start.Add(time.Duration(WarmUpFraction*float64(dur))))
	row.Note = note
	return row, nil
}

// freshDir makes dir an empty directory that only root can enter (chronyd
// insists), replacing one that an earlier Compare left, and refusing to
// replace anything else.
func freshDir(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return fmt.Errorf("run directory: %w", err)
	case len(entries) > 0:
		if _, err := os.Stat(filepath.Join(dir, networkLog)); err != nil {
			return fmt.Errorf("%s exists and is not a daemon run directory (no %s); refusing to replace it", dir, networkLog)
		}
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("replace %s: %w", dir, err)
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("run directory: %w", err)
	}
	return os.Chmod(dir, 0o700)
}
