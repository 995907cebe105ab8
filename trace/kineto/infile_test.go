package kineto

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/chronosync/chronosync/infile"
)

// gzipStream compresses what write writes, at gzip's best compression.
func gzipStream(t testing.TB, write func(w io.Writer)) []byte {
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

// eventsBomb is a trace of n identical events, gzipped: 1 M events are
// about 60 MB of JSON in about 200 KB.
func eventsBomb(t testing.TB, n int) []byte {
	const ev = `{"ph":"X","cat":"kernel","name":"k","pid":1,"tid":1,"ts":1,"dur":1}`
	return gzipStream(t, func(w io.Writer) {
		io.WriteString(w, `{"traceEvents":[`+ev)
		chunk := []byte(strings.Repeat(","+ev, 1000))
		for range n / 1000 {
			w.Write(chunk)
		}
		io.WriteString(w, "]}")
	})
}

// stringBomb is a trace of one event whose name is n bytes long, gzipped.
func stringBomb(t testing.TB, n int) []byte {
	return gzipStream(t, func(w io.Writer) {
		io.WriteString(w, `{"traceEvents":[{"ph":"X","pid":1,"tid":1,"ts":1,"dur":1,"name":"`)
		chunk := bytes.Repeat([]byte("a"), 1<<20)
		for range n >> 20 {
			w.Write(chunk)
		}
		io.WriteString(w, `"}]}`)
	})
}

// allocated is the number of bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestKinetoGzipBomb: a .json.gz that decompresses past infile.GzipLimit
// of its size (1 M events in about 200 KB; one 64 MiB string in 64 KB) is
// refused naming the cap, having decompressed it into io.Discard: a read
// from a file allocates next to nothing, however far the bomb would go.
// A stream that cannot seek is held to the cap as it is read.
func TestKinetoGzipBomb(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		gz   []byte
	}{
		{"1M events", eventsBomb(t, 1_000_000)},
		{"64 MiB string", stringBomb(t, 64<<20)},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, "node0.json.gz")
			if err := os.WriteFile(path, c.gz, 0o644); err != nil {
				t.Fatal(err)
			}
			limit := infile.GzipLimit(int64(len(c.gz)))
			want := fmt.Sprintf("read %s: decompressed byte %d: gzip: decompresses to more than %s (%d bytes): a gzip input of %d bytes may decompress to max(8 MiB (infile.GzipFloor), 64 (infile.GzipRatio) × its size), at most 16 GiB (infile.MaxDecompressed)",
				path, limit, infile.Bytes(limit), limit, len(c.gz))
			for _, read := range []struct {
				name string
				f    func() error
			}{
				{"Read", func() error { _, err := Read(path); return err }},
				{"ReadWith", func() error {
					_, err := ReadWith(path, DecodeOptions{Raw: true, Keep: func(Event) bool { return true }})
					return err
				}},
			} {
				var err error
				n := allocated(func() { err = read.f() })
				if !errors.Is(err, infile.ErrTooLarge) || err.Error() != want {
					t.Errorf("%s: error\n got %v\nwant %s", read.name, err, want)
				}
				if n > 4<<20 {
					t.Errorf("%s: allocated %d bytes refusing it", read.name, n)
				}
			}
			// Not seekable: refused once past the running cap (GzipFloor
			// here), having decoded no more than that.
			var err error
			n := allocated(func() { _, err = Decode(struct{ io.Reader }{bytes.NewReader(c.gz)}, "pipe") })
			if !errors.Is(err, infile.ErrTooLarge) || !strings.Contains(err.Error(), "gzip: decompresses to more than 8 MiB (8388608 bytes): the first ") {
				t.Errorf("unseekable: got %v", err)
			}
			if n > 256<<20 {
				t.Errorf("unseekable: allocated %d bytes refusing it", n)
			}
		})
	}
}

// TestKinetoGzipWhitespaceLinear: a long run of white space in a gzipped
// trace costs time linear in its length. The json.Decoder scans the run
// again from its start on every read it makes, and grows its buffer only
// when a read fills it, so with a gzip reader's short reads the scans added
// up to the square of the run over the reader's chunk. The window fills
// every read, so the reads are logarithmic in the run and the bytes
// scanned again at most twice the input.
func TestKinetoGzipWhitespaceLinear(t *testing.T) {
	for _, mib := range []int{1, 2, 3} { // twice that in all, under GzipFloor
		text := `{"traceEvents":[` + strings.Repeat(" ", mib<<20) + `{"ph":"X","name":"k","pid":1,"tid":1,"ts":1,"dur":1}` + strings.Repeat(" ", mib<<20) + `]}`
		gz := gzipStream(t, func(w io.Writer) { io.WriteString(w, text) })
		for _, src := range []struct {
			name string
			r    io.Reader
		}{
			{"file", bytes.NewReader(gz)},
			{"stream", struct{ io.Reader }{bytes.NewReader(gz)}},
			{"plain", bytes.NewReader([]byte(text))},
		} {
			d, done, err := newDecoder(src.r, "x.json.gz", DecodeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			tr := &Trace{Rank: -1}
			err = d.document(tr)
			done()
			if err != nil || len(tr.Events) != 1 {
				t.Fatalf("%d MiB %s: %d events, %v", mib, src.name, len(tr.Events), err)
			}
			n := int64(len(text))
			if d.src.total != n || d.src.reads > 40 || d.src.rescan > 2*n {
				t.Errorf("%d MiB %s: %d reads scanning %d bytes again, for %d bytes: want at most 40 reads and %d bytes", mib, src.name, d.src.reads, d.src.rescan, n, 2*n)
			}
		}
	}
}

// BenchmarkDecodeGzipWhitespace: ns/op grows as the run of white space
// does (it grew as its square).
func BenchmarkDecodeGzipWhitespace(b *testing.B) {
	for _, mib := range []int{1, 2, 4} {
		text := `{"traceEvents":[` + strings.Repeat(" ", mib<<20) + `]}`
		gz := gzipStream(b, func(w io.Writer) { io.WriteString(w, text) })
		b.Run(fmt.Sprintf("%dMiB", mib), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for range b.N {
				if _, err := Decode(bytes.NewReader(gz), "x.json.gz"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestGzipTrailingGarbage: bytes after the last gzip member are an error
// naming their offset in the file (they read as "unexpected EOF"); a file
// of several members (cat a.gz b.gz) is one trace, as gzip -d reads it.
func TestGzipTrailingGarbage(t *testing.T) {
	const text = `{"traceEvents":[{"ph":"X","name":"k","pid":1,"tid":1,"ts":1,"dur":1}]}`
	whole := gzipped(t, []byte(text))
	two := append(gzipped(t, []byte(text[:20])), gzipped(t, []byte(text[20:]))...)
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		in   []byte
		want string // "" for success
	}{
		{"one member", whole, ""},
		{"two members", two, ""},
		{"garbage", append(bytes.Clone(whole), "garbage"...), fmt.Sprintf("gzip: data after the last member at byte %d: expected the end of the file or another gzip member (1f 8b), got 67 61", len(whole))},
		{"a zero byte", append(bytes.Clone(whole), 0), fmt.Sprintf("gzip: data after the last member at byte %d: expected the end of the file or another gzip member (1f 8b), got 00", len(whole))},
		{"cut second member", append(bytes.Clone(whole), 0x1f, 0x8b, 8, 0), fmt.Sprintf("gzip: member at byte %d: unexpected EOF", len(whole))},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, "t.json.gz")
			if err := os.WriteFile(path, c.in, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, read := range []struct {
				name string
				f    func() (*Trace, error)
			}{
				{"Read", func() (*Trace, error) { return Read(path) }},
				{"stream", func() (*Trace, error) { return Decode(struct{ io.Reader }{bytes.NewReader(c.in)}, path) }},
			} {
				tr, err := read.f()
				switch {
				case c.want == "" && (err != nil || len(tr.Events) != 1):
					t.Errorf("%s: got %v", read.name, err)
				case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
					t.Errorf("%s: error\n got %v\nwant %s", read.name, err, c.want)
				}
			}
		})
	}
}

// TestInputIsFIFO: a FIFO given as a trace is refused at once, naming what
// it is, not waited on for ever.
func TestInputIsFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "node0.json")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := Read(path); done <- err }()
	select {
	case err := <-done:
		if want := "read " + path + ": open " + path + ": is a FIFO, not a regular file (expected a Kineto trace)"; err == nil || err.Error() != want {
			t.Errorf("got %v\nwant %s", err, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Read blocks on a FIFO")
	}
}

// TestInputIsDevice: /dev/zero as a trace is refused as a device.
func TestInputIsDevice(t *testing.T) {
	_, err := Read("/dev/zero")
	if want := "read /dev/zero: open /dev/zero: is a character device, not a regular file (expected a Kineto trace)"; err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}
