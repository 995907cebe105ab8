package xspace_test

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/chronosync/chronosync/trace/xplanepb"
	"github.com/chronosync/chronosync/trace/xspace"
)

func TestWriteFile(t *testing.T) {
	errWrite := errors.New("disk on fire")
	tests := []struct {
		name    string
		old     []byte // the file at path before, nil for none
		write   func(io.Writer) error
		wantErr error
		want    []byte // the file at path after, nil for none
	}{
		{"new file", nil, writeString("hello"), nil, []byte("hello")},
		{"replaces", []byte("old"), writeString("new"), nil, []byte("new")},
		{"fails, no file", nil, failAfter("half", errWrite), errWrite, nil},
		{"fails, old file kept", []byte("old"), failAfter("half", errWrite), errWrite, []byte("old")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "trace.json.gz")
			if tt.old != nil {
				if err := os.WriteFile(path, tt.old, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			err := xspace.WriteFile(path, tt.write)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("got error %v, want %v", err, tt.wantErr)
			}
			got, rerr := os.ReadFile(path)
			switch {
			case tt.want == nil && !errors.Is(rerr, fs.ErrNotExist):
				t.Errorf("%s exists (%q, %v), want no file", path, got, rerr)
			case tt.want != nil && !bytes.Equal(got, tt.want):
				t.Errorf("%s holds %q (%v), want %q", path, got, rerr, tt.want)
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(entries); (tt.want == nil && n != 0) || (tt.want != nil && n != 1) {
				t.Errorf("%d files left in the directory (a temporary file?): %v", n, entries)
			}
		})
	}
}

func TestWriteFileNoDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "absent", "x.pb")
	if err := xspace.WriteFile(path, writeString("x")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("got %v, want a not-exist error", err)
	}
}

func TestWriteDeterministic(t *testing.T) {
	b := xspace.NewPlaneBuilder(0, "/host:CPU")
	for _, name := range []string{"e", "d", "c", "b", "a"} {
		b.Line(1, "main", 0).Add(name, 1, 1, xspace.Int(name+"_stat", 1))
	}
	s := &xplanepb.XSpace{Planes: []*xplanepb.XPlane{b.Plane()}}
	dir := t.TempDir()
	var files [][]byte
	for _, name := range []string{"1.pb", "2.pb"} {
		path := filepath.Join(dir, name)
		if err := xspace.Write(path, s); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, data)
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Fatal("the same XSpace written twice gives different bytes")
	}
}

func writeString(s string) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := io.WriteString(w, s)
		return err
	}
}

func failAfter(s string, err error) func(io.Writer) error {
	return func(w io.Writer) error {
		if _, werr := io.WriteString(w, s); werr != nil {
			return werr
		}
		return err
	}
}
