package offsets

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestTornTail cuts the last round of a file at every byte: the reader
// returns the whole lines and flags the torn one.
func TestTornTail(t *testing.T) {
	rounds := randomOffsets(rand.New(rand.NewPCG(7, 8)), 3, 4)
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testMeta(FileOffsets))
	if err != nil {
		t.Fatal(err)
	}
	var lastStart int
	for _, r := range rounds {
		lastStart = buf.Len()
		if err := w.Append(r...); err != nil {
			t.Fatal(err)
		}
	}
	data := buf.Bytes()
	for cut := lastStart; cut <= len(data); cut++ {
		info, offs, err := DecodeOffsets(bytes.NewReader(data[:cut]), "offsets.jsonl")
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		whole := bytes.LastIndexByte(data[:cut], '\n') + 1
		if info.Torn != (whole < cut) || info.TornBytes != cut-whole {
			t.Fatalf("cut at %d: Torn %v, TornBytes %d; the torn line has %d bytes", cut, info.Torn, info.TornBytes, cut-whole)
		}
		if lines := bytes.Count(data[:cut], []byte("\n")); info.Lines != lines || len(offs) != lines-1 {
			t.Fatalf("cut at %d: %d lines, %d offsets; want %d lines", cut, info.Lines, len(offs), lines)
		}
	}
}

func TestOpenAppend(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	rounds := randomRounds(rng, 4, 3)
	dir := t.TempDir()
	path := filepath.Join(dir, "rounds.jsonl")
	writeFile(t, path, testMeta(FileRounds), rounds[:3])
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	torn := `{"type":"edge","round_id":3,"window_id":3,"src":0,"dst":1,"alpha":1e-`
	if err := os.WriteFile(path, append(bytes.Clone(whole), torn...), 0o644); err != nil {
		t.Fatal(err)
	}
	info, edges, _, err := ReadRounds(path)
	if err != nil || !info.Torn || info.TornBytes != len(torn) || len(edges) != 9 {
		t.Fatalf("reading the torn file: %+v, %d edges, %v", info, len(edges), err)
	}

	w, err := OpenAppend(path)
	if err != nil {
		t.Fatal(err)
	}
	if w.Dropped() != int64(len(torn)) || w.Meta() != full(FileRounds) {
		t.Errorf("Dropped() = %d, Meta() = %+v", w.Dropped(), w.Meta())
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, whole) {
		t.Errorf("OpenAppend left %d bytes, want the %d of the whole lines", len(got), len(whole))
	}
	if err := w.Append(rounds[3]...); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(dir, "fresh.jsonl")
	writeFile(t, fresh, testMeta(FileRounds), rounds)
	got, _ := os.ReadFile(path)
	want, _ := os.ReadFile(fresh)
	if !bytes.Equal(got, want) {
		t.Errorf("resumed file differs from one written in one go:\n%s\nwant\n%s", got, want)
	}

	// A whole file resumes as it is.
	w, err = OpenAppend(fresh)
	if err != nil || w.Dropped() != 0 {
		t.Fatalf("OpenAppend of a whole file: %v, dropped %d", err, w.Dropped())
	}
	w.Close()
	if again, _ := os.ReadFile(fresh); !bytes.Equal(again, want) {
		t.Error("OpenAppend changed a whole file")
	}
}

func TestOpenAppendRefuses(t *testing.T) {
	dir := t.TempDir()
	meta := metaLine(FileOffsets)
	for name, tc := range map[string]struct{ content, err string }{
		"empty":      {"", "F:1: expected a meta line, got an empty file"},
		"torn meta":  {meta, "F:1: expected a meta line, got a torn line with no trailing newline"},
		"not meta":   {`{"type":"offset"}` + "\n", `F:1: type: expected "meta", got "offset"`},
		"bad schema": {strings.Replace(meta, `"schema":3`, `"schema":4`, 1) + "\n", "F:1: schema: expected 3, got 4"},
		// A file of schema 2 is read, but records of schema 3 are not
		// appended to it.
		"schema 2": {strings.Replace(meta, `"schema":3`, `"schema":2`, 1) + "\n", "F:1: schema: expected 3, got 2"},
		"schema 1": {with(with(meta, "schema", "1"), "uncertainty", "") + "\n", "F:1: schema: expected 3, got 1" + schema1Hint},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_"))
		if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := OpenAppend(path)
		var le *LineError
		if !errors.As(err, &le) || strings.Replace(err.Error(), path, "F", 1) != tc.err {
			t.Errorf("%s: %v, want %s", name, err, tc.err)
		}
		if got, _ := os.ReadFile(path); string(got) != tc.content {
			t.Errorf("%s: the file changed", name)
		}
	}
	if _, err := OpenAppend(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}

// TestRecordsKeepTheirOrder checks that DecodeRounds keeps file order and
// that nil slices are written as empty arrays.
func TestRecordsKeepTheirOrder(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testMeta(FileRounds))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(Round{RoundID: 1}, Edge{RoundID: 1, Src: 2}, &Round{RoundID: 2}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"reported":[],"missing":[]`) {
		t.Errorf("nil slices not written as []:\n%s", buf.String())
	}
	_, edges, rounds, err := DecodeRounds(&buf, "r")
	want := []Round{{Type: "round", RoundID: 1, Reported: []int{}, Missing: []int{}},
		{Type: "round", RoundID: 2, Reported: []int{}, Missing: []int{}}}
	if err != nil || len(edges) != 1 || !reflect.DeepEqual(rounds, want) {
		t.Errorf("got %+v %+v %v", edges, rounds, err)
	}
}
