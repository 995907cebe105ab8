package auth

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chronosync/chronosync/infile"
)

// TestKeyFileTooLarge: a key file larger than infile.MaxKey (4 KiB) is
// refused from its size, before a byte is read (a 4 GB file was read
// whole: 3 GB and counting); one at the cap is read.
func TestKeyFileTooLarge(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		size int64
		want string // "" for a key read
	}{
		{"4 GiB", 4 << 30, "larger than 4096 bytes (4 KiB, infile.MaxKey), the most a key file may hold"},
		{"one byte over", infile.MaxKey + 1, "4.0 KiB (4097 bytes): larger than 4096 bytes (4 KiB, infile.MaxKey)"},
		{"at the cap", infile.MaxKey, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, "cluster.key")
			// 64 hex digits, then spaces up to the size (sparse beyond).
			key := strings.Repeat("ab", 32)
			if err := os.WriteFile(path, []byte(key+strings.Repeat(" ", 4000)), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(path, c.size); err != nil {
				t.Fatal(err)
			}
			if c.size == infile.MaxKey {
				// The rest: white space, which a key file may end with.
				b, _ := os.ReadFile(path)
				for i := range b {
					if b[i] == 0 {
						b[i] = '\n'
					}
				}
				if err := os.WriteFile(path, b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			start := time.Now()
			k, err := LoadKey(path)
			if d := time.Since(start); d > time.Second {
				t.Errorf("took %v", d)
			}
			if c.want == "" {
				if err != nil || k == nil {
					t.Fatalf("got %v", err)
				}
				return
			}
			if err == nil || !errors.Is(err, infile.ErrTooLarge) || !strings.Contains(err.Error(), "auth: key file: open "+path+": ") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v\nwant …%s", err, c.want)
			}
		})
	}
}
