package infile

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
)

// TestOpen: a regular file opens; a directory, a device, a FIFO and a socket
// are refused naming what they are, promptly; a file over the kind's cap is
// refused with both sizes and the constant.
func TestOpen(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "k")
	if err := os.WriteFile(regular, []byte("00ff\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// A short path: a socket's name is at most 107 bytes.
	sockDir, err := os.MkdirTemp("", "infile")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sockDir)
	sock := filepath.Join(sockDir, "s")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 4<<30); err != nil { // sparse: no blocks
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, path string
		kind       Kind
		want       string // "" for success
		is         error
	}{
		{"regular", regular, Key, "", nil},
		{"directory", dir, Scenario, "open " + dir + ": is a directory, not a regular file (expected a scenario file)", ErrNotRegular},
		{"device", "/dev/zero", XSpace, "open /dev/zero: is a character device, not a regular file (expected an XSpace trace)", ErrNotRegular},
		{"link to a device", link, Snapshots, "open " + link + ": is a character device, not a regular file (expected a snapshots file)", ErrNotRegular},
		{"FIFO", fifo, Kineto, "open " + fifo + ": is a FIFO, not a regular file (expected a Kineto trace)", ErrNotRegular},
		{"socket", sock, Offsets, "open " + sock + ": is a socket, not a regular file (expected an offsets or rounds file)", ErrNotRegular},
		{"too large", big, Key, "open " + big + ": 4 GiB (4294967296 bytes): larger than 4096 bytes (4 KiB, infile.MaxKey), the most a key file may hold", ErrTooLarge},
		{"missing", filepath.Join(dir, "none"), Cluster, "no such file or directory", os.ErrNotExist},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			f, err := Open(c.path, c.kind)
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("Open took %v", d)
			}
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				f.Close()
				return
			}
			if err == nil {
				f.Close()
				t.Fatalf("opened %s", c.path)
			}
			if !strings.Contains(err.Error(), c.want) || !errors.Is(err, c.is) {
				t.Errorf("got %v\nwant %q (is %v)", err, c.want, c.is)
			}
		})
	}
}

// TestGrowing: a file that grows past its cap after it was opened is cut
// off with an error, not read to its end.
func TestGrowing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k")
	if err := os.WriteFile(path, []byte("00ff\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path, Key)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.WriteFile(path, bytes.Repeat([]byte("0"), 3*MaxKey), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(f)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "read "+path+": grew while read past 4096 bytes (4 KiB, infile.MaxKey)") {
		t.Errorf("got %v", err)
	}
	if len(b) != MaxKey {
		t.Errorf("read %d bytes, want the cap, %d", len(b), MaxKey)
	}
}

// TestReadFile reads a whole file, and one exactly at its kind's cap.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{0, 1, 4095, MaxKey} {
		path := filepath.Join(dir, "k")
		want := bytes.Repeat([]byte("a"), n)
		if err := os.WriteFile(path, want, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := ReadFile(path, Key)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%d bytes: got %d bytes, %v", n, len(got), err)
		}
	}
}

// TestKinds: every kind has a name and a cap, configuration files the
// smallest.
func TestKinds(t *testing.T) {
	for k := Kind(0); k < numKinds; k++ {
		in := k.info()
		if in.name == "" || in.max <= 0 || in.named == "" {
			t.Errorf("kind %d: %+v", k, in)
		}
	}
	for _, k := range []Kind{Cluster, Scenario, SweepMatrix} {
		if k.Max() != 1<<20 {
			t.Errorf("%v: %d", k, k.Max())
		}
	}
	if Key.Max() != 4096 || Costs.Max() != 65536 {
		t.Errorf("key %d, costs %d", Key.Max(), Costs.Max())
	}
}

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 17: "17 B", 4096: "4 KiB", 1536: "1.5 KiB", 4 << 30: "4 GiB", 4<<30 + 1<<29: "4.5 GiB", 16 << 20: "16 MiB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// gz compresses each of parts as a gzip member of its own.
func gz(t testing.TB, parts ...[]byte) []byte {
	var b bytes.Buffer
	for _, p := range parts {
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		if _, err := zw.Write(p); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

func TestGzipLimit(t *testing.T) {
	for _, c := range []struct{ in, want int64 }{
		{0, GzipFloor}, {1000, GzipFloor}, {GzipFloor / GzipRatio, GzipFloor}, {1 << 20, 64 << 20},
		{MaxDecompressed / GzipRatio, MaxDecompressed}, {1 << 40, MaxDecompressed}, {1 << 62, MaxDecompressed},
	} {
		if got := GzipLimit(c.in); got != c.want {
			t.Errorf("GzipLimit(%d) = %d, want %d", c.in, got, c.want)
		}
	}
}

// TestGunzip: members in turn, bytes after the last member refused with
// their offset, a cut stream refused, a stream past its cap refused, with
// a known size (CheckGzip) and a running one.
func TestGunzip(t *testing.T) {
	a, b := []byte("hello, "), []byte("world\n")
	one := gz(t, a)
	bomb := gz(t, make([]byte, GzipFloor+1))
	at := strconv.Itoa(len(one))
	for _, c := range []struct {
		name string
		in   []byte
		want string // the text, or the error's
		is   error
	}{
		{"one member", one, "hello, ", nil},
		{"two members", gz(t, a, b), "hello, world\n", nil},
		{"empty member", gz(t, a, nil, b), "hello, world\n", nil},
		{"garbage", append(bytes.Clone(one), "**"...), "gzip: data after the last member at byte " + at + ": expected the end of the file or another gzip member (1f 8b), got 2a 2a", ErrTrailingData},
		{"one byte after", append(bytes.Clone(one), 0), "gzip: data after the last member at byte " + at + ": expected the end of the file or another gzip member (1f 8b), got 00", ErrTrailingData},
		{"cut member", append(bytes.Clone(one), 0x1f, 0x8b, 8), "gzip: member at byte " + at + ": unexpected EOF", io.ErrUnexpectedEOF},
		{"cut", one[:len(one)-3], "gzip: unexpected EOF", io.ErrUnexpectedEOF},
		{"bomb", bomb, "gzip: decompresses to more than 8 MiB (8388608 bytes): ", ErrTooLarge},
	} {
		t.Run(c.name, func(t *testing.T) {
			check := func(how string, got []byte, err error) {
				t.Helper()
				if c.is == nil {
					if err != nil || string(got) != c.want {
						t.Errorf("%s: got %q, %v", how, got, err)
					}
					return
				}
				if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, c.is) {
					t.Errorf("%s: got %v, want %q", how, err, c.want)
				}
			}
			n, err := CheckGzip(bytes.NewReader(c.in))
			if c.is == nil && (err != nil || n != int64(len(c.want))) {
				t.Errorf("CheckGzip: %d bytes, %v; want %d bytes", n, err, len(c.want))
			}
			if c.is != nil {
				check("CheckGzip", nil, err)
			}
			for _, size := range []int64{int64(len(c.in)), -1} {
				g, err := NewGunzip(bytes.NewReader(c.in), size)
				var got []byte
				if err == nil {
					got, err = io.ReadAll(g)
				}
				check("Gunzip", got, err)
			}
		})
	}
}

// TestCheckGzipBombCost: a bomb is refused having decompressed no more
// than its cap, into io.Discard: allocating next to nothing.
func TestCheckGzipBombCost(t *testing.T) {
	bomb := gz(t, make([]byte, 256<<20)) // about 256 KB
	allocs := testing.AllocsPerRun(1, func() {
		if _, err := CheckGzip(bytes.NewReader(bomb)); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("got %v", err)
		}
	})
	if allocs > 1000 {
		t.Errorf("%v allocations", allocs)
	}
}
