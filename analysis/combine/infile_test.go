package combine

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"

	"github.com/chronosync/chronosync/infile"
)

// gzipOf compresses what write writes, at gzip's best compression.
func gzipOf(t testing.TB, write func(w io.Writer)) []byte {
	var b bytes.Buffer
	zw, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	write(zw)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// bytesAllocated is the number of bytes f allocates.
func bytesAllocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestKinetoGzipBomb: combine reads a Kineto trace's whole text, so a
// .json.gz with no decompressed-size limit took it past 6 GB (20 M events
// in 2.6 MB, one 1 GiB string in 1 MB; 1 M events in 131 KB: 905 MB). It is
// now refused from what it decompresses to, counted into io.Discard
// before anything is held: the file and next to nothing else.
func TestKinetoGzipBomb(t *testing.T) {
	const ev = `{"ph":"X","cat":"kernel","name":"k","pid":1,"tid":1,"ts":1,"dur":1}`
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		gz   []byte
	}{
		{"1M events", gzipOf(t, func(w io.Writer) {
			io.WriteString(w, `{"traceEvents":[`+ev)
			chunk := []byte(strings.Repeat(","+ev, 1000))
			for range 1000 {
				w.Write(chunk)
			}
			io.WriteString(w, "]}")
		})},
		{"64 MiB string", gzipOf(t, func(w io.Writer) {
			io.WriteString(w, `{"traceEvents":[{"ph":"X","pid":1,"tid":1,"ts":1,"dur":1,"name":"`)
			w.Write(bytes.Repeat([]byte("a"), 64<<20))
			io.WriteString(w, `"}]}`)
		})},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, "node0.json.gz")
			if err := os.WriteFile(path, c.gz, 0o644); err != nil {
				t.Fatal(err)
			}
			var err error
			n := bytesAllocated(func() { _, err = readKinetoText(path) })
			limit := infile.GzipLimit(int64(len(c.gz)))
			want := fmt.Sprintf("read %s: gzip: decompresses to more than %s (%d bytes): a gzip input of %d bytes", path, infile.Bytes(limit), limit, len(c.gz))
			if !errors.Is(err, infile.ErrTooLarge) || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("got %v\nwant %s…", err, want)
			}
			if n > uint64(len(c.gz))+4<<20 {
				t.Errorf("allocated %d bytes for a file of %d", n, len(c.gz))
			}
			// The node id is read first, through kineto.ReadWith.
			if _, err := NodeOfTrace(path, 0); !errors.Is(err, infile.ErrTooLarge) {
				t.Errorf("NodeOfTrace: got %v", err)
			}
		})
	}
}

// TestGzipTrailingGarbage: bytes after the last member of a Kineto
// .json.gz are an error naming their offset (they read as "unexpected
// EOF"); members one after another are one text.
func TestGzipTrailingGarbage(t *testing.T) {
	const text = `{"traceEvents":[]}`
	one := gzipOf(t, func(w io.Writer) { io.WriteString(w, text) })
	two := append(gzipOf(t, func(w io.Writer) { io.WriteString(w, text[:5]) }), gzipOf(t, func(w io.Writer) { io.WriteString(w, text[5:]) })...)
	path := filepath.Join(t.TempDir(), "node0.json.gz")
	for _, c := range []struct {
		name string
		in   []byte
		want string // "" for text
	}{
		{"one member", one, ""},
		{"two members", two, ""},
		{"garbage", append(bytes.Clone(one), "xyz"...), fmt.Sprintf("read %s: gzip: data after the last member at byte %d: expected the end of the file or another gzip member (1f 8b), got 78 79", path, len(one))},
	} {
		if err := os.WriteFile(path, c.in, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := readKinetoText(path)
		switch {
		case c.want == "" && (err != nil || string(got) != text):
			t.Errorf("%s: got %q, %v", c.name, got, err)
		case c.want != "" && (err == nil || err.Error() != c.want):
			t.Errorf("%s: error\n got %v\nwant %s", c.name, err, c.want)
		}
	}
}

// TestOffsetsLineTooLong: combine's look at an offsets file's first line
// names the line and the limit ("bufio.Scanner: token too long" before).
func TestOffsetsLineTooLong(t *testing.T) {
	path := filepath.Join(t.TempDir(), "offsets.jsonl")
	long := `{"type":"meta","x":"` + strings.Repeat("x", 17<<20) + `"}` + "\n"
	if err := os.WriteFile(path, []byte("\n"+long), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := readOffsets(path)
	if want := path + ":2: line longer than 16 MiB (offsets.MaxLineBytes)"; err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

// TestInputIsDevice: /dev/zero as a trace, an offsets file or a snapshots
// file is refused as a device (read without end before).
func TestInputIsDevice(t *testing.T) {
	for _, c := range []struct {
		name string
		read func() error
		want string
	}{
		{"Kineto text", func() error { _, err := readKinetoText("/dev/zero"); return err }, "(expected a Kineto trace)"},
		{"offsets", func() error { _, _, err := readOffsets("/dev/zero"); return err }, "(expected an offsets or rounds file)"},
		{"XSpace ahead", func() error { r := (&combiner{}).readAhead("/dev/zero", nil); <-r.done; return r.err }, "(expected an XSpace trace)"},
	} {
		if err := c.read(); err == nil || !strings.Contains(err.Error(), "open /dev/zero: is a character device, not a regular file "+c.want) {
			t.Errorf("%s: got %v", c.name, err)
		}
	}
	if IsKineto("/dev/zero") {
		t.Error("IsKineto read /dev/zero")
	}
}

// TestReadInto checks that readInto reads a file whole into a buffer
// with room for it (in its storage), into a new one without, and that a
// file read over a longer one's buffer holds only its own bytes.
func TestReadInto(t *testing.T) {
	dir := t.TempDir()
	short, long := filepath.Join(dir, "short.xplane.pb"), filepath.Join(dir, "long.xplane.pb")
	if err := os.WriteFile(short, []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(long, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		buf        []byte
		want       string
		reused     bool
	}{
		{"no buffer", long, nil, "0123456789", false},
		{"too small", long, make([]byte, 4, 10), "0123456789", false}, // needs size+1
		{"room", long, make([]byte, 0, 11), "0123456789", true},
		{"over a longer file", short, []byte("0123456789x"), "abc", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readInto(tc.path, tc.buf)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if reused := cap(tc.buf) > 0 && &got[:1][0] == &tc.buf[:1][0]; reused != tc.reused {
				t.Errorf("buffer reused: %v, want %v", reused, tc.reused)
			}
		})
	}
}
