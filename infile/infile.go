// Package infile is the one way chronosync opens an input file: regular
// files only, each kind of input within a size cap, gzip inputs within a
// decompressed-size cap.
//
// [Open] opens a path without blocking (O_NONBLOCK, so that a FIFO with no
// writer does not hang the open), checks the open descriptor with fstat and
// refuses anything but a regular file, naming what it is:
//
//	open /dev/zero: is a character device, not a regular file (expected an XSpace trace)
//	open in.fifo: is a FIFO, not a regular file (expected a Kineto trace)
//
// It then refuses a file larger than its kind's cap before reading a byte:
//
//	open cluster.key: 4 GiB (4294967296 bytes): larger than 4096 bytes (4 KiB, infile.MaxKey), the most a key file may hold
//
// and reads it through a reader that stops with an error at the cap, so
// that a file growing while it is read is cut off, never read without end.
// [ReadFile] reads a whole file so.
//
// The caps, by [Kind] (generous for what real runs produce, tiny for what
// a person writes):
//
//	kind                                    cap      constant
//	XSpace trace                            16 GiB   MaxTrace
//	Kineto trace (plain or gzipped)         16 GiB   MaxTrace
//	clock snapshots                         1 GiB    MaxSnapshots
//	offsets.jsonl, rounds.jsonl             16 GiB   MaxRecords
//	legacy offsets                          16 GiB   MaxRecords
//	ground truth (truth.jsonl)              16 GiB   MaxRecords
//	results CSV, sweep index                16 GiB   MaxRecords
//	probes.bin                              64 GiB   MaxProbeLog
//	event log, checkpoints                  64 GiB   MaxProbeLog
//	run manifest                            16 MiB   MaxManifest
//	cluster file, scenario, sweep matrix    1 MiB    MaxConfig
//	costs file                              64 KiB   MaxCosts
//	key file                                4 KiB    MaxKey
//
// A gzip input (a Kineto .json.gz) may decompress to max(GzipFloor,
// GzipRatio × its size), at most MaxDecompressed: max(8 MiB, 64 × the
// file), at most 16 GiB. [CheckGzip] measures that into io.Discard, in
// constant memory, before anything is decoded; [Gunzip] reads every member
// of the stream and refuses bytes after the last one.
//
// Files under /proc and /sys are not inputs: their sizes are not what they
// hold, and chronosync reads them with os.ReadFile.
package infile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// Caps on an input's size, by kind (see the package documentation).
const (
	// MaxTrace bounds an XSpace or Kineto trace file, and MaxDecompressed
	// a gzipped Kineto trace's JSON text.
	MaxTrace = 16 << 30
	// MaxSnapshots bounds a clock snapshots file (a day of pairs at one a
	// second is about 3 MB).
	MaxSnapshots = 1 << 30
	// MaxRecords bounds a file of records: offsets, rounds, ground truth,
	// results and sweep index.
	MaxRecords = 16 << 30
	// MaxProbeLog bounds probes.bin and a run's event log.
	MaxProbeLog = 64 << 30
	// MaxManifest bounds a run's manifest.json (it holds the scenario as
	// run, itself at most MaxConfig).
	MaxManifest = 16 << 20
	// MaxConfig bounds a file a person writes: a cluster file, a scenario,
	// a sweep matrix (the largest scenario shipped is 3 KB).
	MaxConfig = 1 << 20
	// MaxCosts bounds a costs file (as halo.MaxCostsFileBytes).
	MaxCosts = 64 << 10
	// MaxKey bounds a key file: 64 hex digits and a newline are 65 bytes.
	MaxKey = 4 << 10
)

// Kind is a kind of input; it names the input in errors and sets its cap.
type Kind int

// The kinds of input.
const (
	XSpace Kind = iota
	Kineto
	Snapshots
	Offsets
	LegacyOffsets
	GroundTruth
	Results
	SweepIndex
	ProbeLog
	EventLog
	Manifest
	Cluster
	Scenario
	SweepMatrix
	Costs
	Key
	numKinds
)

// kindInfo is what a Kind names and allows.
type kindInfo struct {
	name  string // "an XSpace trace"
	max   int64
	named string // the constant, for errors
}

var kinds = [numKinds]kindInfo{
	XSpace:        {"an XSpace trace", MaxTrace, "MaxTrace"},
	Kineto:        {"a Kineto trace", MaxTrace, "MaxTrace"},
	Snapshots:     {"a snapshots file", MaxSnapshots, "MaxSnapshots"},
	Offsets:       {"an offsets or rounds file", MaxRecords, "MaxRecords"},
	LegacyOffsets: {"a legacy offsets file", MaxRecords, "MaxRecords"},
	GroundTruth:   {"a ground truth file", MaxRecords, "MaxRecords"},
	Results:       {"a results CSV", MaxRecords, "MaxRecords"},
	SweepIndex:    {"a sweep index", MaxRecords, "MaxRecords"},
	ProbeLog:      {"a probe log", MaxProbeLog, "MaxProbeLog"},
	EventLog:      {"an event log", MaxProbeLog, "MaxProbeLog"},
	Manifest:      {"a run manifest", MaxManifest, "MaxManifest"},
	Cluster:       {"a cluster file", MaxConfig, "MaxConfig"},
	Scenario:      {"a scenario file", MaxConfig, "MaxConfig"},
	SweepMatrix:   {"a sweep matrix", MaxConfig, "MaxConfig"},
	Costs:         {"a costs file", MaxCosts, "MaxCosts"},
	Key:           {"a key file", MaxKey, "MaxKey"},
}

func (k Kind) info() kindInfo {
	if k < 0 || k >= numKinds {
		return kindInfo{"an input", MaxConfig, "MaxConfig"}
	}
	return kinds[k]
}

// String names the kind, e.g. "a key file".
func (k Kind) String() string { return k.info().name }

// Max is the most bytes a file of kind k may hold.
func (k Kind) Max() int64 { return k.info().max }

// ErrNotRegular is wrapped by the error of a path that is not a regular
// file (a device, FIFO, socket, directory or symbolic link's target of
// such).
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is wrapped by the error of a file larger than its kind's cap,
// or a gzip stream that decompresses to more than its cap.
var ErrTooLarge = errors.New("input too large")

// tooLargeError is an error that wraps ErrTooLarge with a message of its
// own.
type tooLargeError string

func tooLarge(msg string) error { return tooLargeError(msg) }

func (e tooLargeError) Error() string { return string(e) }

func (e tooLargeError) Unwrap() error { return ErrTooLarge }

// File is an input opened by [Open]: a regular file read through a reader
// that stops at its kind's cap.
type File struct {
	f    *os.File
	path string
	kind Kind
	size int64 // at open
	read int64 // bytes read since the last Seek
}

// Open opens the file at path for reading as an input of kind k. It refuses,
// without reading it, anything that is not a regular file (the error names
// what it is and wraps [ErrNotRegular]) and a file larger than k's cap (the
// error names both sizes and the constant, and wraps [ErrTooLarge]). Errors
// are *fs.PathError values with Op "open", as os.Open's are.
//
// Opening does not block: the path is opened with O_NONBLOCK, so that a
// FIFO without a writer is refused at once rather than waited on, and the
// flag is cleared once the descriptor is known to be a regular file.
func Open(path string, k Kind) (*File, error) {
	// Refuse what is plainly not a file before opening it: opening some
	// devices has effects. The open descriptor is checked again below.
	if st, err := os.Stat(path); err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // read as os.Open's errors do
		}
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	} else if !st.Mode().IsRegular() {
		return nil, notRegular(path, st.Mode(), k)
	}
	var fd int
	for {
		var err error
		fd, err = unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		break
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, notRegular(path, unixMode(st.Mode), k)
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	if err := checkSize(path, st.Size, k); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &File{f: os.NewFile(uintptr(fd), path), path: path, kind: k, size: st.Size}, nil
}

// checkSize refuses a file of size bytes beyond k's cap.
func checkSize(path string, size int64, k Kind) error {
	in := k.info()
	if size <= in.max {
		return nil
	}
	return &fs.PathError{Op: "open", Path: path, Err: tooLarge(fmt.Sprintf("%s (%d bytes): larger than %d bytes (%s, infile.%s), the most %s may hold",
		Bytes(size), size, in.max, Bytes(in.max), in.named, in.name))}
}

// notRegular is the error of a path of mode m that is not a regular file.
func notRegular(path string, m fs.FileMode, k Kind) error {
	what := "not a regular file"
	switch {
	case m&fs.ModeDir != 0:
		what = "a directory"
	case m&fs.ModeNamedPipe != 0:
		what = "a FIFO"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	case m&fs.ModeCharDevice != 0:
		what = "a character device"
	case m&fs.ModeDevice != 0:
		what = "a block device"
	case m&fs.ModeSymlink != 0:
		what = "a symbolic link"
	}
	return &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("is %s, %w (expected %s)", what, ErrNotRegular, k.info().name)}
}

// unixMode maps st_mode's file type to an fs.FileMode type.
func unixMode(m uint32) fs.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	case unix.S_IFLNK:
		return fs.ModeSymlink
	}
	return fs.ModeIrregular
}

// Read reads from the file. Past the kind's cap (a file that grew since it
// was opened) it returns an error wrapping [ErrTooLarge].
func (f *File) Read(p []byte) (int, error) {
	in := f.kind.info()
	if left := max(in.max+1-f.read, 0); int64(len(p)) > left {
		p = p[:left]
	}
	n, err := f.f.Read(p)
	f.read += int64(n)
	if f.read > in.max {
		return n - int(min(f.read-in.max, int64(n))), &fs.PathError{Op: "read", Path: f.path, Err: tooLarge(fmt.Sprintf("grew while read past %d bytes (%s, infile.%s), the most %s may hold",
			in.max, Bytes(in.max), in.named, in.name))}
	}
	return n, err
}

// Seek sets the offset of the next Read, as os.File's Seek does; the cap
// counts from there.
func (f *File) Seek(offset int64, whence int) (int64, error) {
	pos, err := f.f.Seek(offset, whence)
	if err == nil {
		f.read = pos
	}
	return pos, err
}

// Close closes the file.
func (f *File) Close() error { return f.f.Close() }

// Size is the file's size when it was opened.
func (f *File) Size() int64 { return f.size }

// Name is the path the file was opened with.
func (f *File) Name() string { return f.path }

// Kind is the kind the file was opened as.
func (f *File) Kind() Kind { return f.kind }

// ReadFile reads the whole file at path as an input of kind k, with the
// checks of [Open].
func ReadFile(path string, k Kind) ([]byte, error) { return ReadFileInto(path, k, nil) }

// ReadFileInto is ReadFile into buf's storage when it has room for the
// file, else into a new buffer: a caller that reads many files in turn
// reuses one's buffer for a later one.
func ReadFileInto(path string, k Kind, buf []byte) ([]byte, error) {
	f, err := Open(path, k)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := buf[:0]
	if int64(cap(b)) < f.size+1 { // +1: the read that finds the end
		b = make([]byte, 0, f.size+1)
	}
	for {
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // grew since fstat: let append choose
		}
	}
}

// Bytes renders a size in bytes for a person: "4 KiB", "4.0 GiB", "17 B".
func Bytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i, v := 0, float64(n)
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	switch {
	case i == 0:
		return fmt.Sprintf("%d B", n)
	case n%(1<<(10*i)) == 0:
		return fmt.Sprintf("%d %s", n>>(10*i), units[i])
	}
	return fmt.Sprintf("%.1f %s", v, units[i])
}
