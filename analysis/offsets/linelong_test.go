package offsets

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOffsetsLineTooLong: a line over MaxLineBytes is an error naming the
// file, the line and the limit, in the strict readers and the legacy one
// (it was "bufio.Scanner: token too long", with no line and no limit).
func TestOffsetsLineTooLong(t *testing.T) {
	if MaxLineBytes != 16<<20 {
		t.Fatalf("MaxLineBytes is %d: errLongMsg says 16 MiB", MaxLineBytes)
	}
	long := `{"type":"offset","note":"` + strings.Repeat("x", MaxLineBytes) + `"}`
	legacy := `{"node_id":1,"midpoint_ns":5,"offset_ns":1}`
	dir := t.TempDir()
	for _, c := range []struct {
		name, text string
		read       func(path string) error
		want       string
	}{
		{"offsets", lines(metaLine(FileOffsets), goodOffset, long, goodOffset),
			func(p string) error { _, _, err := ReadOffsets(p); return err },
			"offsets.jsonl:3: line longer than 16 MiB (offsets.MaxLineBytes)"},
		{"rounds", lines(metaLine(FileRounds), long),
			func(p string) error { _, _, _, err := ReadRounds(p); return err },
			"offsets.jsonl:2: line longer than 16 MiB (offsets.MaxLineBytes)"},
		{"legacy", lines(legacy, legacy, long),
			func(p string) error { _, err := ReadLegacy(p); return err },
			"offsets.jsonl:3: line longer than 16 MiB (offsets.MaxLineBytes)"},
		{"legacy, last line", legacy + "\n" + long,
			func(p string) error { _, err := ReadLegacy(p); return err },
			"offsets.jsonl:2: line longer than 16 MiB (offsets.MaxLineBytes)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, "offsets.jsonl")
			if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := c.read(path); err == nil || !strings.HasSuffix(err.Error(), c.want) {
				t.Errorf("got %v\nwant …%s", err, c.want)
			}
		})
	}
}
