package offsets

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// pairRound is round r of a run directory's two files: the offsets of
// three nodes, and two edges and the round line that says three nodes were
// solved.
func pairRound(rng *rand.Rand, r uint64) (offs, rnds []any) {
	for _, o := range randomOffsets(rng, 1, 3)[0] {
		o := o.(Offset)
		o.RoundID, o.WindowID = r, r
		offs = append(offs, o)
	}
	for _, e := range randomRounds(rng, 1, 2)[0] {
		switch e := e.(type) {
		case *Edge:
			e.RoundID, e.WindowID = r, r
			rnds = append(rnds, e)
		case Round:
			e.RoundID, e.WindowID, e.Solved, e.Error, e.Missing = r, r, 3, "", []int{}
			rnds = append(rnds, e)
		}
	}
	return offs, rnds
}

// writePair writes rounds first..last of a run directory's pair into dir,
// as a master does, and returns the writers (open) for more.
func writePair(t *testing.T, dir string, rng *rand.Rand, first, last uint64) (*Writer, *Writer) {
	t.Helper()
	ow, err := Create(filepath.Join(dir, OffsetsFile), testMeta(FileOffsets))
	if err != nil {
		t.Fatal(err)
	}
	rw, err := Create(filepath.Join(dir, RoundsFile), testMeta(FileRounds))
	if err != nil {
		t.Fatal(err)
	}
	appendRounds(t, ow, rw, rng, first, last)
	return ow, rw
}

func appendRounds(t *testing.T, ow, rw *Writer, rng *rand.Rand, first, last uint64) {
	t.Helper()
	for r := first; r <= last; r++ {
		offs, rnds := pairRound(rng, r)
		if err := ow.Append(offs...); err != nil {
			t.Fatal(err)
		}
		if err := rw.Append(rnds...); err != nil {
			t.Fatal(err)
		}
	}
}

// appendRaw appends b to the file at path, as a write cut short by a kill
// leaves it.
func appendRaw(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}

// encodeLines is the lines records take in a file of kind file.
func encodeLines(t *testing.T, file string, records ...any) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testMeta(file))
	if err != nil {
		t.Fatal(err)
	}
	head := buf.Len()
	if err := w.Append(records...); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()[head:]
}

// TestRepair: a master killed (kill -9) while it appended round 6 leaves
// the pair in one of the states below. Repair cuts exactly round 6's
// lines and a torn line, after which both files read strictly, the last
// round is 5, and appending round 6 again reads strictly too. Without
// Repair, ReadStrict refuses each damaged pair (checked first), and a
// damaged line before the end is an error, nothing cut.
func TestRepair(t *testing.T) {
	for _, tc := range []struct {
		name string
		// damage damages a pair holding rounds 1..5, given round 6's
		// lines.
		damage     func(t *testing.T, dir string, offs6, rnds6 []byte)
		offsetsCut int64 // want, in bytes; -1: all of offs6
		roundsCut  int64 // -1: all of rnds6 but its round line; -2: all but 10 bytes
		wantErr    string
	}{
		{name: "whole", damage: func(*testing.T, string, []byte, []byte) {}},
		{name: "offsets torn", damage: func(t *testing.T, dir string, offs6, _ []byte) {
			appendRaw(t, filepath.Join(dir, OffsetsFile), offs6[:40])
		}, offsetsCut: 40},
		{name: "offsets whole, rounds missing", damage: func(t *testing.T, dir string, offs6, _ []byte) {
			appendRaw(t, filepath.Join(dir, OffsetsFile), offs6)
		}, offsetsCut: -1},
		{name: "offsets whole, rounds torn in the round line", damage: func(t *testing.T, dir string, offs6, rnds6 []byte) {
			appendRaw(t, filepath.Join(dir, OffsetsFile), offs6)
			appendRaw(t, filepath.Join(dir, RoundsFile), rnds6[:len(rnds6)-10])
		}, offsetsCut: -1, roundsCut: -2},
		{name: "offsets whole, rounds' edges whole, round line absent", damage: func(t *testing.T, dir string, offs6, rnds6 []byte) {
			appendRaw(t, filepath.Join(dir, OffsetsFile), offs6)
			edges := rnds6[:bytes.LastIndexByte(rnds6[:len(rnds6)-1], '\n')+1]
			appendRaw(t, filepath.Join(dir, RoundsFile), edges)
		}, offsetsCut: -1, roundsCut: -1},
		{name: "a damaged line before the end", damage: func(t *testing.T, dir string, _, _ []byte) {
			path := filepath.Join(dir, OffsetsFile)
			b, _ := os.ReadFile(path)
			lines := bytes.SplitAfter(b, []byte("\n"))
			lines[3] = []byte("{\"type\":\"offset\"}\n")
			os.WriteFile(path, bytes.Join(lines, nil), 0o644)
		}, wantErr: "offsets.jsonl:4: missing fields"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			dir := t.TempDir()
			ow, rw := writePair(t, dir, rng, 1, 5)
			ow.Close()
			rw.Close()
			o6, r6 := pairRound(rng, 6)
			offs6, rnds6 := encodeLines(t, FileOffsets, o6...), encodeLines(t, FileRounds, r6...)
			tc.damage(t, dir, offs6, rnds6)
			path := filepath.Join(dir, OffsetsFile)
			if _, _, err := ReadStrict(path); (err == nil) != (tc.offsetsCut == 0 && tc.roundsCut == 0) && tc.wantErr == "" {
				t.Fatalf("before Repair: ReadStrict: %v", err)
			}
			rep, err := Repair(dir)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Repair: %v, want an error with %q", err, tc.wantErr)
				}
				if rep.Cut() {
					t.Errorf("Repair cut %+v of a file it refused", rep)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			wantOff, wantRnd := tc.offsetsCut, tc.roundsCut
			if wantOff == -1 {
				wantOff = int64(len(offs6))
			}
			lastLine := int64(len(rnds6) - bytes.LastIndexByte(rnds6[:len(rnds6)-1], '\n') - 1)
			switch wantRnd {
			case -1:
				wantRnd = int64(len(rnds6)) - lastLine
			case -2:
				wantRnd = int64(len(rnds6)) - 10
			}
			if rep.LastRound != 5 || rep.OffsetsCut != wantOff || rep.RoundsCut != wantRnd {
				t.Errorf("Repair = %+v, want last round 5, %d bytes cut of offsets.jsonl, %d of rounds.jsonl", rep, wantOff, wantRnd)
			}
			if _, offs, err := ReadStrict(path); err != nil || len(offs) != 15 {
				t.Fatalf("after Repair: ReadStrict: %d records, %v", len(offs), err)
			}
			// The restarted master appends round 6 again.
			ow, err = OpenAppend(path)
			if err != nil {
				t.Fatal(err)
			}
			rw, err = OpenAppend(filepath.Join(dir, RoundsFile))
			if err != nil {
				t.Fatal(err)
			}
			appendRounds(t, ow, rw, rng, 6, 7)
			ow.Close()
			rw.Close()
			_, offs, err := ReadStrict(path)
			if err != nil || len(offs) != 21 || offs[20].RoundID != 7 {
				t.Fatalf("after the restart: ReadStrict: %d records, %v", len(offs), err)
			}
		})
	}
}

// TestRotate: a pair rotated twice leaves offsets.1.jsonl, offsets.2.jsonl
// and their rounds files, each pair read strictly against its own rounds
// file (not rounds.jsonl), and Repair of the fresh pair finds the last
// round in the newest segment. A rotation a kill cut between its two
// renames is completed by Repair.
func TestRotate(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	dir := t.TempDir()
	ow, rw := writePair(t, dir, rng, 1, 3)
	for seg, last := range []uint64{6, 9} {
		ow.Close()
		rw.Close()
		n, err := Rotate(dir)
		if err != nil || n != seg+1 {
			t.Fatalf("Rotate = %d, %v; want %d", n, err, seg+1)
		}
		rep, err := Repair(dir) // before the fresh pair: absent files
		if err != nil || rep.LastRound != last-3 {
			t.Fatalf("Repair after rotation %d: %+v, %v; want last round %d", n, rep, err, last-3)
		}
		ow, rw = writePair(t, dir, rng, last-2, last)
	}
	ow.Close()
	rw.Close()
	if ns, err := Segments(dir); err != nil || !slices.Equal(ns, []int{1, 2}) {
		t.Fatalf("Segments = %v, %v", ns, err)
	}
	for seg, first := range map[int]uint64{1: 1, 2: 4, 0: 7} {
		_, offs, err := ReadStrict(filepath.Join(dir, SegmentName(OffsetsFile, seg)))
		if err != nil || len(offs) != 9 || offs[0].RoundID != first {
			t.Errorf("segment %d: %d records from round %d, %v; want 9 from round %d", seg, len(offs), offs[0].RoundID, err, first)
		}
	}

	// A fresh pair with only its meta lines: the last round is the
	// newest segment's.
	ow.Close()
	rw.Close()
	if _, err := Rotate(dir); err != nil {
		t.Fatal(err)
	}
	ow, rw = writePair(t, dir, rng, 1, 0)
	ow.Close()
	rw.Close()
	if rep, err := Repair(dir); err != nil || rep.LastRound != 9 || rep.Cut() {
		t.Fatalf("Repair of a fresh pair: %+v, %v; want last round 9, nothing cut", rep, err)
	}

	// A kill between the renames of a rotation.
	if err := os.Rename(filepath.Join(dir, OffsetsFile), filepath.Join(dir, SegmentName(OffsetsFile, 4))); err != nil {
		t.Fatal(err)
	}
	rep, err := Repair(dir)
	if err != nil || rep.Rotation != 4 {
		t.Fatalf("Repair of a rotation halfway: %+v, %v", rep, err)
	}
	if _, err := os.Stat(filepath.Join(dir, SegmentName(RoundsFile, 4))); err != nil {
		t.Errorf("Repair did not complete the rotation: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, RoundsFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("rounds.jsonl after the completed rotation: %v", err)
	}
}

// TestWriterFlushAndSize: each Append is in the file when it returns (a
// reader beside the writer sees it, and a kill after it loses nothing),
// and Size counts the file's bytes, across OpenAppend's cut.
func TestWriterFlushAndSize(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	dir := t.TempDir()
	ow, rw := writePair(t, dir, rng, 1, 0)
	path := filepath.Join(dir, OffsetsFile)
	for r := uint64(1); r <= 3; r++ {
		appendRounds(t, ow, rw, rng, r, r)
		st, err := os.Stat(path)
		if err != nil || st.Size() != ow.Size() {
			t.Fatalf("round %d: file %d bytes, Size %d, %v", r, st.Size(), ow.Size(), err)
		}
		if _, offs, err := ReadStrict(path); err != nil || len(offs) != 3*int(r) {
			t.Fatalf("round %d, writer still open: ReadStrict: %d records, %v", r, len(offs), err)
		}
	}
	ow.Close()
	rw.Close()
	whole := ow.Size()
	appendRaw(t, path, []byte(`{"type":"offset","round`))
	w, err := OpenAppend(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if w.Size() != whole || w.Dropped() != 23 {
		t.Errorf("after OpenAppend: Size %d, Dropped %d; want %d, 23", w.Size(), w.Dropped(), whole)
	}
}
