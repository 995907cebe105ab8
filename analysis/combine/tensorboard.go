package combine

import (
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// Layouts of the combined XSpace (Options.Layout).
const (
	// LayoutDefault writes the combined XSpace at Options.Output.
	LayoutDefault = ""
	// LayoutTensorBoard writes it where TensorBoard's profile plugin and
	// xprof look for profiles: <logdir>/plugins/profile/<run>/<host>.xplane.pb
	// (openxla/xprof, plugin/xprof/profile_plugin.py: a run is a directory
	// under a plugins/profile directory anywhere below the log directory;
	// each <host>.xplane.pb in it is one host of the run, named by the file
	// name before .xplane.pb). Nothing else goes into the run's directory,
	// so that no other file is taken for a host or a tool.
	LayoutTensorBoard = "tensorboard"
	// DefaultTensorBoardRun names the profile run when
	// Options.TensorBoardRun is "".
	DefaultTensorBoardRun = "chronosync"
	// DefaultTensorBoardHost names the host when Options.TensorBoardHost
	// is "": the trace viewer shows "combined /device:GPU:64" and so on.
	DefaultTensorBoardHost = "combined"
)

// TensorBoardPath is where LayoutTensorBoard puts the XSpace of a run
// and host under the log directory logdir.
func TensorBoardPath(logdir, run, host string) string {
	return filepath.Join(logdir, "plugins", "profile", run, host+".xplane.pb")
}

// SpacePath is where Combine writes the combined XSpace under o: Output,
// or with LayoutTensorBoard its place under the log directory.
func SpacePath(o Options) string {
	if o.Layout != LayoutTensorBoard {
		return o.Output
	}
	return TensorBoardPath(tensorBoardDir(o), orDefault(o.TensorBoardRun, DefaultTensorBoardRun), orDefault(o.TensorBoardHost, DefaultTensorBoardHost))
}

// tensorBoardDir is the log directory of LayoutTensorBoard.
func tensorBoardDir(o Options) string {
	if o.TensorBoardDir != "" {
		return o.TensorBoardDir
	}
	return filepath.Dir(o.Output)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// checkLayout refuses an unknown layout and run or host names that are
// not one plain file name each.
func checkLayout(o Options) error {
	switch o.Layout {
	case LayoutDefault:
		return nil
	case LayoutTensorBoard:
	default:
		return fmt.Errorf("combine: unknown layout %q: use %q or %q (the default)", o.Layout, LayoutTensorBoard, "default")
	}
	for _, n := range []struct{ what, name string }{{"TensorBoard run", o.TensorBoardRun}, {"TensorBoard host", o.TensorBoardHost}} {
		if n.name == "" {
			continue
		}
		if !utf8.ValidString(n.name) || strings.ContainsAny(n.name, "/\\\x00") || strings.HasPrefix(n.name, ".") {
			return fmt.Errorf("combine: %s name %q: must be one file name, not starting with a dot, without slashes", n.what, n.name)
		}
	}
	return nil
}

// makeSpaceDir makes the directory of the XSpace, one level at a time, so
// that a failed combine removes every level it made.
func (c *combiner) makeSpaceDir() error {
	dir := filepath.Dir(SpacePath(c.o))
	if c.o.Layout != LayoutTensorBoard {
		return c.makeDir(dir)
	}
	logdir := tensorBoardDir(c.o)
	rel, err := filepath.Rel(logdir, dir)
	if err != nil {
		return fmt.Errorf("combine: %w", err)
	}
	if err := c.makeDir(logdir); err != nil {
		return err
	}
	at := logdir
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		at = filepath.Join(at, part)
		if err := c.makeDir(at); err != nil {
			return err
		}
	}
	return nil
}
