package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/chronosync/chronosync/peers"
	"github.com/chronosync/chronosync/real/netlab"
)

func newPeersCmd() *cobra.Command {
	var (
		duration time.Duration
		out      string
	)
	cmd := &cobra.Command{
		Use:   "peers [--duration D] [--out DIR] SCENARIO...",
		Short: "Compare chronosync's offset error with chrony's and ptp4l's on the real backend",
		Long: `For each SCENARIO (a path, or the name of a built-in scenario), run chronosync
on the real backend, then chrony (basic, then interleaved mode) and ptp4l
(software timestamps, free running), each for --duration on a fresh copy of
the scenario's namespaces and links, server or master on node 0 and client or
slave on node 1; in scenarios of more nodes only that pair is compared for
the daemons, while chronosync's figures cover all its nodes. All namespaces
share one kernel clock, so every reported offset is an error. The daemons'
first 20% is discarded as warm-up; chronosync's figures start at its
converged_from round. Prints the |error| percentiles and writes DIR/peers.csv,
DIR/peers.png and, per scenario, DIR/<scenario>/{chronosync,chrony-basic,
chrony-xleave,ptp4l}. Needs root.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg := peers.CompareConfig{Duration: duration, Dir: out, Log: cmd.ErrOrStderr()}
			for _, arg := range args {
				sc, path, err := loadScenario(arg)
				if err != nil {
					return err
				}
				cfg.Scenarios = append(cfg.Scenarios, sc)
				cfg.Files = append(cfg.Files, path)
			}
			if err := netlab.Available(); err != nil {
				return fmt.Errorf("peers runs on network namespaces and needs root: run it as root (sudo chronosync peers ...): %w", err)
			}
			// SIGINT or SIGTERM stops the comparison; the namespaces of
			// the step under way are removed and what was measured kept.
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			tab, err := peers.Compare(ctx, cfg)
			if tab == nil || len(tab.Rows) == 0 {
				return err
			}
			return errors.Join(err, writePeers(cmd, tab, out))
		},
	}
	f := cmd.Flags()
	f.DurationVar(&duration, "duration", 0, "how long each daemon runs (default: the scenario's duration)")
	f.StringVar(&out, "out", filepath.Join("runs", "peers"), "directory for peers.csv, peers.png and the runs")
	return cmd
}

// writePeers prints the table and writes its CSV and plot into dir.
func writePeers(cmd *cobra.Command, tab *peers.Table, dir string) error {
	w := cmd.OutOrStdout()
	if err := tab.WriteText(w); err != nil {
		return err
	}
	csvPath, pngPath := filepath.Join(dir, "peers.csv"), filepath.Join(dir, "peers.png")
	if err := tab.SaveCSV(csvPath); err != nil {
		return err
	}
	if err := tab.WritePlot(pngPath); err != nil {
		return err
	}
	fmt.Fprintf(w, "|offset error| in µs; daemons after %.0f%% warm-up, node 0 -> node 1; wrote %s and %s\n",
		peers.WarmUpFraction*100, csvPath, pngPath)
	return nil
}
