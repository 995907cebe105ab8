package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/chronosync/chronosync/harness"
)

// logKey is the context key of the command's logConfig.
type logKey struct{}

// logConfig is the command's logger and the settings it was made with,
// which a real run's nodes take for run.log too.
type logConfig struct {
	log   *slog.Logger
	level slog.Level
	json  bool
}

// logFlags are the global --log-level and --log-format.
type logFlags struct {
	level, format string
}

// add defines the flags on every command (root's persistent flags).
func (l *logFlags) add(root *cobra.Command) {
	f := root.PersistentFlags()
	f.StringVar(&l.level, "log-level", "info", "the least severe log records written (to stderr, and a real run's run.log): debug, info, warn or error")
	f.StringVar(&l.format, "log-format", "text", "the log's format (on stderr, and in a real run's run.log): text (key=value) or json (one object a line)")
}

// parseLogLevel parses --log-level.
func parseLogLevel(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("--log-level %q: expected debug, info, warn or error", s)
}

// newLogger is the one logger of a command: records of level and above
// written to w as text or JSON lines.
func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	lv, err := parseLogLevel(level)
	if err != nil {
		return nil, err
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch strings.ToLower(format) {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: expected text or json", format)
}

// setup builds the command's logger from the flags and puts it in the
// command's context, where logger finds it (root's PersistentPreRunE).
func (l *logFlags) setup(cmd *cobra.Command, args []string) error {
	log, err := newLogger(cmd.ErrOrStderr(), l.level, l.format)
	if err != nil {
		return err
	}
	level, _ := parseLogLevel(l.level)
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	cmd.SetContext(context.WithValue(ctx, logKey{}, logConfig{log: log, level: level, json: strings.EqualFold(l.format, "json")}))
	log.Debug("command", "command", cmd.CommandPath(), "args", args, "version", harness.Version(), "pid", os.Getpid())
	return nil
}

// logger is the command's logger (one that discards, before setup).
func logger(cmd *cobra.Command) *slog.Logger { return config(cmd).log }

// config is the command's logConfig (info and text before setup).
func config(cmd *cobra.Command) logConfig {
	if ctx := cmd.Context(); ctx != nil {
		if l, ok := ctx.Value(logKey{}).(logConfig); ok {
			return l
		}
	}
	return logConfig{log: slog.New(slog.DiscardHandler)}
}

// runLogLevel is the level of a real run's run.log: --log-level.
func runLogLevel(cmd *cobra.Command) slog.Level { return config(cmd).level }

// runLogJSON says a real run's run.log is JSON lines: --log-format json.
func runLogJSON(cmd *cobra.Command) bool { return config(cmd).json }
