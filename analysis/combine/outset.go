package combine

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/chronosync/chronosync/lockfile"
)

// Output sets. Combine's outputs (the combined XSpace, its Chrome JSON,
// metadata, validate report and the aligned Kineto copies) are one set:
// either every one of them is replaced or none is.
//
// Each output is written into a staging directory that Combine creates in
// the output's own directory (.<base>.tmp-*, so that the rename never
// crosses file systems; one per directory the outputs go to: Output's and
// the Kineto directory's), synced and closed. Only once every output is
// whole are they renamed into place, one after another. Before an output
// replaces an old file, the old file is kept in the staging directory (a
// hard link, or where the file system has none, a rename), and a failure
// part-way through renames the kept files back: on any error nothing new
// is left and nothing old is replaced.
//
// Renaming several files is not one atomic step. A crash (power loss,
// SIGKILL) during the renames leaves some outputs new and the others old,
// each of them whole, with the old versions of those replaced kept under
// the staging directory .<base>.tmp-*/ (old-<i>-<name>); on a file system
// without hard links, the output being replaced at that moment may be
// missing, its old version there too. A crash before the renames leaves
// the old outputs and a staging directory of new ones that are never
// renamed. Either way nothing is half written, the staging directory says
// what happened, and the next combine into the set replaces it whole (it
// leaves a dead run's staging directory alone).

// outputSet is one Combine call's outputs, written into staging
// directories and committed together.
type outputSet struct {
	prefix string            // staging directories' name prefix: .<base>.tmp-
	stages map[string]string // target directory → its staging directory
	files  []*stagedFile
	// keep is set when a rollback failed: the staging directories hold
	// old outputs then, and are left for the user (the error names them).
	keep bool
	// hook (tests), when set, is called before an output is written
	// ("write", its path) and before it is renamed into place ("rename");
	// its error fails that step.
	hook func(step, path string) error
}

// stagedFile is one output.
type stagedFile struct {
	path   string   // where it goes
	staged string   // its new content
	f      *os.File // open while being written
	aside  string   // the old file at path, kept while committing ("": none)
	done   bool     // renamed into place
}

// newOutputSet returns an empty set for the outputs of output (Options.Output).
func newOutputSet(output string, hook func(step, path string) error) *outputSet {
	return &outputSet{prefix: "." + filepath.Base(OutputBase(output)) + ".tmp-", stages: map[string]string{}, hook: hook}
}

// stage returns the staging directory for the outputs of dir, creating it.
func (o *outputSet) stage(dir string) (string, error) {
	if s, ok := o.stages[dir]; ok {
		return s, nil
	}
	s, err := os.MkdirTemp(dir, o.prefix)
	if err != nil {
		return "", fmt.Errorf("combine: create a staging directory for the outputs in %s: %w", dir, err)
	}
	o.stages[dir] = s
	return s, nil
}

// create starts the output at path, in its staging directory.
func (o *outputSet) create(path string) (*os.File, error) {
	if o.hook != nil {
		if err := o.hook("write", path); err != nil {
			return nil, fmt.Errorf("combine: write %s: %w", path, err)
		}
	}
	s, err := o.stage(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	staged := filepath.Join(s, strconv.Itoa(len(o.files))+"-"+filepath.Base(path))
	f, err := os.OpenFile(staged, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("combine: create %s: %w", path, err)
	}
	o.files = append(o.files, &stagedFile{path: path, staged: staged, f: f})
	return f, nil
}

// add writes a whole small output.
func (o *outputSet) add(path string, write func(io.Writer) error) error {
	f, err := o.create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	if err := write(w); err != nil {
		return fmt.Errorf("combine: write %s: %w", path, err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("combine: write %s: %w", path, err)
	}
	return nil
}

// commit syncs and closes every output, then renames each into place; a
// failure part-way puts the old files back (see the comment above). It
// returns the outputs' paths.
func (o *outputSet) commit() ([]string, error) {
	for _, sf := range o.files {
		err := sf.f.Sync()
		if cerr := sf.f.Close(); err == nil {
			err = cerr
		}
		sf.f = nil
		if err != nil {
			return nil, fmt.Errorf("combine: write %s: %w", sf.path, err)
		}
	}
	for i, sf := range o.files {
		if err := o.replace(i, sf); err != nil {
			if rerr := o.rollback(); rerr != nil {
				o.keep = true
				return nil, fmt.Errorf("combine: move %s into place: %w; putting the old outputs back failed too: %w (they are kept under %s)", sf.path, err, rerr, o.stageList())
			}
			return nil, fmt.Errorf("combine: move %s into place: %w (the outputs already moved were put back: none replaced)", sf.path, err)
		}
	}
	var paths []string
	for _, sf := range o.files {
		paths = append(paths, sf.path)
	}
	for dir := range o.stages {
		syncDir(dir) // the renames made durable where the file system allows
	}
	o.files = nil
	return paths, nil
}

// replace keeps the old file at sf.path aside and renames the new one
// into place.
func (o *outputSet) replace(i int, sf *stagedFile) error {
	if o.hook != nil {
		if err := o.hook("rename", sf.path); err != nil {
			return err
		}
	}
	st, err := os.Lstat(sf.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	case st.IsDir():
		return fmt.Errorf("%s is a directory", sf.path)
	default:
		aside := filepath.Join(filepath.Dir(sf.staged), "old-"+strconv.Itoa(i)+"-"+filepath.Base(sf.path))
		// A hard link keeps the old file without its path ever being
		// empty; a file system without them gets a rename.
		if err := os.Link(sf.path, aside); err != nil {
			if err := os.Rename(sf.path, aside); err != nil {
				return fmt.Errorf("keep the old %s aside: %w", sf.path, err)
			}
		}
		sf.aside = aside
	}
	if err := os.Rename(sf.staged, sf.path); err != nil {
		return err
	}
	sf.done = true
	return nil
}

// rollback undoes replace for every output, last first: an old file is
// renamed back over the new one, a new one without an old one removed.
func (o *outputSet) rollback() error {
	var errs []error
	for _, sf := range slices.Backward(o.files) {
		switch {
		case sf.aside != "":
			if err := os.Rename(sf.aside, sf.path); err != nil {
				errs = append(errs, fmt.Errorf("restore %s from %s: %w", sf.path, sf.aside, err))
				continue
			}
			sf.aside = ""
		case sf.done:
			if err := os.Remove(sf.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("remove the new %s: %w", sf.path, err))
			}
		}
		sf.done = false
	}
	return errors.Join(errs...)
}

// stageList names the staging directories.
func (o *outputSet) stageList() string {
	var s []string
	for _, d := range o.stages {
		s = append(s, d)
	}
	slices.Sort(s)
	return fmt.Sprint(s)
}

// cleanup closes what is still open and removes the staging directories
// (after a commit, only the old files kept aside are left in them),
// unless a failed rollback left old outputs there.
func (o *outputSet) cleanup() {
	for _, sf := range o.files {
		if sf.f != nil {
			_ = sf.f.Close()
			sf.f = nil
		}
	}
	if o.keep {
		return
	}
	for dir, s := range o.stages {
		_ = os.RemoveAll(s)
		delete(o.stages, dir)
	}
}

// syncDir fsyncs a directory, so that renames in it survive a crash;
// errors are ignored (some file systems cannot sync a directory).
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	_ = d.Close()
}

// output is one path Combine would write: what it is says
// before + path + after.
type output struct {
	before, path, after string
}

// String names the output and its path.
func (o output) String() string { return o.before + o.path + o.after }

// outputsOf lists the paths Combine would write for inputs.
func outputsOf(inputs []Input, o Options) []output {
	base := OutputBase(o.Output)
	outs := []output{{"--output ", o.Output, ""}}
	if o.Layout == LayoutTensorBoard {
		outs[0] = output{"the TensorBoard XSpace ", SpacePath(o), ""}
	}
	if !o.NoTraceJSON {
		outs = append(outs, output{"the Chrome trace ", base + ".trace.json.gz", " (beside --output)"})
	}
	if !o.NoPerfetto {
		outs = append(outs, output{"the Perfetto trace ", base + PerfettoSuffix, " (beside --output)"})
	}
	if o.Validate {
		outs = append(outs, output{"the validate report ", base + ".validate.json", " (beside --output)"})
	}
	outs = append(outs, output{"the metadata ", base + ".metadata.json", " (beside --output)"})
	if !o.NoKinetoOut {
		dir := kinetoDir(o)
		for _, in := range inputs {
			if IsKineto(in.Trace) {
				before := "the aligned copy of " + in.Trace + " ("
				if o.KinetoDir != "" {
					before = "the aligned copy of " + in.Trace + " in --kineto-out " + o.KinetoDir + " ("
				}
				outs = append(outs, output{before, filepath.Join(dir, filepath.Base(in.Trace)), ")"})
			}
		}
	}
	return outs
}

// checkOutputs refuses, before anything is read, outputs that would
// replace an input (the same file by device and inode, through a
// symbolic or hard link too; for an output that does not exist yet, the
// same name in the same directory), two outputs at one path (Kineto
// inputs of one file name in different directories), and an output path
// that is a directory.
func checkOutputs(inputs []Input, o Options) error {
	type input struct{ what, path string }
	var ins []input
	if o.Offsets != "" { // with NoCorrection unread, but the user's file all the same
		ins = append(ins, input{"the offsets file", o.Offsets})
	}
	for _, in := range inputs {
		ins = append(ins, input{fmt.Sprintf("the input trace of node %d", in.Node), in.Trace})
		if in.Snapshots != "" {
			ins = append(ins, input{fmt.Sprintf("the snapshots of node %d", in.Node), in.Snapshots})
		}
	}
	outs := outputsOf(inputs, o)
	for i, out := range outs {
		if st, err := os.Stat(out.path); err == nil && st.IsDir() {
			return fmt.Errorf("combine: %s is a directory: refusing to replace it", out)
		}
		for _, in := range ins {
			if sameFile(out.path, in.path) {
				name := ""
				if in.path != out.path {
					name = in.path + ", "
				}
				return fmt.Errorf("combine: %s is %s (%ssame file): an output never replaces an input", out, in.what, name)
			}
		}
		for _, prev := range outs[:i] {
			if sameFile(out.path, prev.path) {
				return fmt.Errorf("combine: %s and %s are one file: give the inputs distinct file names, or --output another name", prev, out)
			}
		}
	}
	return nil
}

// sameFile reports whether paths a and b name one file: by device and
// inode when both exist (following symbolic links), else the same name in
// the same directory (by device and inode, or where a directory does not
// exist yet, by its absolute path).
func sameFile(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(sa, sb)
	}
	if filepath.Base(a) != filepath.Base(b) {
		return false
	}
	da, errA := os.Stat(filepath.Dir(a))
	db, errB := os.Stat(filepath.Dir(b))
	if errA == nil && errB == nil {
		return os.SameFile(da, db)
	}
	absA, errA := filepath.Abs(a)
	absB, errB := filepath.Abs(b)
	return errA == nil && errB == nil && absA == absB
}

// LockPath is the lock file of the output set of output (Options.Output):
// .<base>.lock beside it, held while one Combine writes the set.
func LockPath(output string) string {
	return filepath.Join(filepath.Dir(output), "."+filepath.Base(OutputBase(output))+".lock")
}

// lock takes the output set's lock (LockPath), making Output's directory
// if missing: one process writes an output set at a time, from before
// anything is read until its outputs are in place. Another process's lock
// (package lockfile: flock(2); a dead holder's is taken over) refuses the
// combine.
func (c *combiner) lock() (*lockfile.Lock, error) {
	if err := c.makeDir(filepath.Dir(c.o.Output)); err != nil {
		return nil, err
	}
	l, err := lockfile.Take(LockPath(c.o.Output))
	if err != nil {
		c.removeMade()
		var held *lockfile.HeldError
		if errors.As(err, &held) {
			return nil, fmt.Errorf("combine: --output %s is being written by another process (PID %s holds its lock %s): one combine writes an output set at a time", c.o.Output, held.PID, held.Path)
		}
		return nil, fmt.Errorf("combine: --output %s: %w", c.o.Output, err)
	}
	return l, nil
}

// removeMade removes the directories Combine made, last first, where
// they are empty.
func (c *combiner) removeMade() {
	for _, d := range slices.Backward(c.made) {
		_ = os.Remove(d)
	}
	c.made = nil
}
