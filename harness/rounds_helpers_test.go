package harness

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chronosync/chronosync/analysis/groundtruth"
	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/probe/probelog"
	"github.com/chronosync/chronosync/rounds"
	"github.com/chronosync/chronosync/rounds/syncpb"
	"github.com/chronosync/chronosync/scenario"
	"github.com/chronosync/chronosync/world"
)

// Helpers of rounds_test.go. Their names start with rt so that they do not
// clash with the package's other tests.

// rtParse parses a scenario written in a test.
func rtParse(t *testing.T, name, text string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Parse(name+".yaml", []byte(text))
	if err != nil {
		t.Fatalf("scenario %s: %v", name, err)
	}
	return sc
}

// rtRun runs sc (with seed instead of its own when not nil) into a fresh
// directory, without an event log, and returns the result and the run
// directory.
func rtRun(t *testing.T, sc *scenario.Scenario, seed *uint64) (*Result, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	start := time.Now()
	res, err := Run(sc, Options{Out: dir, Seed: seed})
	if err != nil {
		t.Fatalf("run %s: %v", sc.Name, err)
	}
	t.Logf("run %s: %d events, simulated in %v (%v in all)", sc.Name, res.Summary.Events, res.Wall.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	if res.Summary.Sync == nil {
		t.Fatalf("run %s: no sync summary", sc.Name)
	}
	return res, dir
}

// rtOffsets reads a run's offsets.jsonl.
func rtOffsets(t *testing.T, dir string) []offsets.Offset {
	t.Helper()
	_, offs, err := offsets.ReadOffsets(filepath.Join(dir, FileOffsets))
	if err != nil {
		t.Fatal(err)
	}
	return offs
}

// rtRounds reads a run's rounds.jsonl.
func rtRounds(t *testing.T, dir string) ([]offsets.Edge, []offsets.Round) {
	t.Helper()
	_, edges, rnds, err := offsets.ReadRounds(filepath.Join(dir, FileRounds))
	if err != nil {
		t.Fatal(err)
	}
	return edges, rnds
}

// rtTruth reads a run's truth.jsonl.
func rtTruth(t *testing.T, dir string) []groundtruth.Window {
	t.Helper()
	_, w, err := groundtruth.Read(filepath.Join(dir, FileTruth))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// rtSHA256 is the hex SHA-256 of a file.
func rtSHA256(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// rtByNode groups offsets records by node, each node's in file order.
func rtByNode(offs []offsets.Offset) map[int][]offsets.Offset {
	m := map[int][]offsets.Offset{}
	for _, o := range offs {
		m[o.NodeID] = append(m[o.NodeID], o)
	}
	return m
}

// rtRoundIDs are the round ids of rounds.jsonl's round lines, in file
// order.
func rtRoundIDs(rnds []offsets.Round) []uint64 {
	ids := make([]uint64, len(rnds))
	for i, r := range rnds {
		ids[i] = r.RoundID
	}
	return ids
}

// rtSeq is 1..n.
func rtSeq(n int) []uint64 {
	s := make([]uint64, n)
	for i := range s {
		s[i] = uint64(i + 1)
	}
	return s
}

// rtAbs is |v|.
func rtAbs(v float64) float64 { return max(v, -v) }

// rtObserver records what the protocol reports when a test builds the
// world itself. now tells the virtual time of each round.
type rtObserver struct {
	now     func() time.Duration
	rounds  []*rounds.RoundReport
	at      []time.Duration
	windows int
}

func (o *rtObserver) Window(world.NodeID, []probelog.Block, *syncpb.NodeWindowData) { o.windows++ }

func (o *rtObserver) Round(r *rounds.RoundReport) {
	o.rounds = append(o.rounds, r)
	o.at = append(o.at, o.now())
}

func (o *rtObserver) Consensus(world.NodeID, offsets.Offset) {}

var _ rounds.Observer = (*rtObserver)(nil)

// rtContainsAll reports whether s has every one of subs.
func rtContainsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
