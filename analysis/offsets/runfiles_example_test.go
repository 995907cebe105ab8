package offsets_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/chronosync/chronosync/analysis/offsets"
)

// ExampleRepair shows how a long-running master continues its files after
// kill -9: Repair cuts the round in progress, OpenAppend appends after the
// last whole round, and the rounds continue after Repaired.LastRound.
func ExampleRepair() {
	dir, _ := os.MkdirTemp("", "node")
	defer os.RemoveAll(dir)
	meta := func(file string) offsets.Meta {
		return offsets.Meta{File: file, RunID: "forever", Estimator: "svm", Mode: offsets.ModeRounds}
	}
	off, _ := offsets.Create(filepath.Join(dir, offsets.OffsetsFile), meta(offsets.FileOffsets))
	rnd, _ := offsets.Create(filepath.Join(dir, offsets.RoundsFile), meta(offsets.FileRounds))
	round := func(id uint64) {
		off.Append(offsets.Offset{RoundID: id, WindowID: id, WindowStartNS: 1e9, WindowEndNS: 2e9, NodeID: 0})
		rnd.Append(offsets.Round{RoundID: id, WindowID: id, Reported: []int{0}, Solved: 1, WindowNS: 1e9})
	}
	round(1)
	round(2)
	// The kill: round 3's offsets are written, its round line is not.
	off.Append(offsets.Offset{RoundID: 3, WindowID: 3, WindowStartNS: 1e9, WindowEndNS: 2e9, NodeID: 0})
	off.Close()
	rnd.Close()

	rep, err := offsets.Repair(dir)
	if err != nil {
		panic(err)
	}
	fmt.Println(rep)
	off, _ = offsets.OpenAppend(filepath.Join(dir, offsets.OffsetsFile))
	rnd, _ = offsets.OpenAppend(filepath.Join(dir, offsets.RoundsFile))
	round(rep.LastRound + 1)
	off.Close()
	rnd.Close()
	_, offs, err := offsets.ReadStrict(filepath.Join(dir, offsets.OffsetsFile))
	fmt.Println(len(offs), "records, last round", offs[len(offs)-1].RoundID, err)
	// Output:
	// cut 186 bytes of offsets.jsonl (1 whole line of the round in progress, and a torn line if any); last round 2
	// 3 records, last round 3 <nil>
}
