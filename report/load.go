package report

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/chronosync/chronosync/analysis/groundtruth"
	"github.com/chronosync/chronosync/analysis/offsets"
	pgplot "github.com/chronosync/chronosync/phasegap/plot"
	pgreport "github.com/chronosync/chronosync/phasegap/report"
)

// Summary is the part of a run's summary.json the report shows. It is
// read on its own (not harness.Summary) so that the report depends on the
// file's format only, and reads summaries of older runs.
type Summary struct {
	Scenario     string  `json:"scenario"`
	Seed         uint64  `json:"seed"`
	Backend      string  `json:"backend"`
	Nodes        int     `json:"nodes"`
	Virtual      float64 `json:"virtual_seconds"`
	Events       uint64  `json:"events"`
	EventHash    string  `json:"event_hash"`
	Protocol     string  `json:"protocol"`
	Status       string  `json:"status"`
	StatusReason string  `json:"status_reason"`
	Conditions   []struct {
		Name  string  `json:"name"`
		Value float64 `json:"value"`
		Bound float64 `json:"bound"`
		Unit  string  `json:"unit"`
		Over  bool    `json:"over"`
		Why   string  `json:"why"`
	} `json:"conditions"`
	Network struct {
		Packets   uint64 `json:"packets"`
		Delivered uint64 `json:"delivered"`
		Lost      uint64 `json:"lost"`
	} `json:"network"`
	Sync *struct {
		Mode          string `json:"mode"`
		Estimator     string `json:"estimator"`
		Reference     int    `json:"reference_node"`
		Rounds        int    `json:"rounds"`
		ConvergedFrom uint64 `json:"converged_from_round"`
		Online        struct {
			OffsetError Stats `json:"offset_error_ns"`
		} `json:"online"`
		SelfCheck *struct {
			Predictions  int     `json:"predictions"`
			Within3Sigma int     `json:"within_3sigma"`
			MaxSigma     float64 `json:"max_sigma"`
		} `json:"self_check"`
		Probes struct {
			Blocks    int `json:"edge_windows"`
			PairsSent int `json:"pairs_sent"`
			Answered  int `json:"probes_answered"`
			Lost      int `json:"probes_lost"`
		} `json:"probes"`
	} `json:"sync"`
	Trace *struct {
		Raw      Counts `json:"raw"`
		Combined Counts `json:"combined"`
		ErrorNS  Stats  `json:"error_ns"`
	} `json:"trace"`
}

// Stats is a stats.Summary as summary.json writes it.
type Stats struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// Counts are a validation's totals.
type Counts struct {
	Violations int `json:"violations"`
	Overlaps   int `json:"overlaps"`
	Warnings   int `json:"warnings"`
}

// Validation is a *.validate.json file: its totals and per-collective
// rows.
type Validation struct {
	Name string // the file's base name without .validate.json
	Counts
	Ops []struct {
		Key        string `json:"key"`
		Compared   int    `json:"compared"`
		Violations int    `json:"violations"`
		Overlaps   int    `json:"overlaps"`
		MaxGapNS   int64  `json:"max_gap_ns"`
	} `json:"ops"`
}

// PeerRow is a row of a peers comparison's peers.csv.
type PeerRow struct {
	Scenario, Tool, Note string
	Samples              int
	P50, P95, P99        float64
}

// Run is everything the report found in a directory.
type Run struct {
	Dir     string
	Summary *Summary // nil without summary.json

	Offsets  []offsets.Offset
	Edges    []offsets.Edge
	Rounds   []offsets.Round
	Truth    []groundtruth.Window
	RefNode  int
	HasTruth bool

	Validations []Validation // sorted by name
	Skew        []Skew       // per collective, raw against combined

	Phasegap []pgreport.Record
	Peers    []PeerRow

	// Notes are what could not be read, shown on the page.
	Notes []string
}

// Load reads what dir holds of the files the report draws. A file that
// is absent is skipped; one that is present but unreadable is an error.
func Load(dir string) (*Run, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("report: %s is not a directory", dir)
	}
	r := &Run{Dir: dir}
	if err := r.loadSummary(); err != nil {
		return nil, err
	}
	if err := r.loadSync(); err != nil {
		return nil, err
	}
	if err := r.loadValidations(); err != nil {
		return nil, err
	}
	if err := r.loadSkew(); err != nil {
		r.Notes = append(r.Notes, err.Error())
	}
	if err := r.loadPhasegap(); err != nil {
		return nil, err
	}
	if err := r.loadPeers(); err != nil {
		return nil, err
	}
	return r, nil
}

// exists reports whether name is a file in r's directory.
func (r *Run) exists(name string) bool {
	st, err := os.Stat(filepath.Join(r.Dir, name))
	return err == nil && st.Mode().IsRegular()
}

func (r *Run) loadSummary() error {
	path := filepath.Join(r.Dir, "summary.json")
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	var s Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("report: read %s: %w", path, err)
	}
	r.Summary = &s
	return nil
}

func (r *Run) loadSync() error {
	if !r.exists(offsets.OffsetsFile) {
		return nil
	}
	info, offs, err := offsets.ReadOffsets(filepath.Join(r.Dir, offsets.OffsetsFile))
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	r.Offsets, r.RefNode = offs, info.Meta.Reference
	if r.exists(offsets.RoundsFile) {
		if _, r.Edges, r.Rounds, err = offsets.ReadRounds(filepath.Join(r.Dir, offsets.RoundsFile)); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	if r.exists("truth.jsonl") {
		if _, r.Truth, err = groundtruth.Read(filepath.Join(r.Dir, "truth.jsonl")); err != nil {
			return fmt.Errorf("report: %w", err)
		}
		r.HasTruth = len(r.Truth) > 0
	}
	return nil
}

func (r *Run) loadValidations() error {
	paths, err := filepath.Glob(filepath.Join(r.Dir, "*.validate.json"))
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	slices.Sort(paths)
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		var v Validation
		if err := json.Unmarshal(b, &v); err != nil {
			return fmt.Errorf("report: read %s: %w", p, err)
		}
		v.Name = strings.TrimSuffix(filepath.Base(p), ".validate.json")
		r.Validations = append(r.Validations, v)
	}
	return nil
}

func (r *Run) loadPhasegap() error {
	files, err := pgreport.FindResults([]string{r.Dir})
	if err != nil || len(files) == 0 {
		return nil // no results.csv: not a PhaseGap run
	}
	recs, err := pgplot.Load(files)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	r.Phasegap = recs
	return nil
}

func (r *Run) loadPeers() error {
	path := filepath.Join(r.Dir, "peers.csv")
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return fmt.Errorf("report: read %s: %w", path, err)
	}
	if len(rows) == 0 || len(rows[0]) < 7 || rows[0][0] != "scenario" {
		return fmt.Errorf("report: read %s: not a peers.csv (want the header scenario,tool,samples,p50_ns,p95_ns,p99_ns,note)", path)
	}
	for i, rec := range rows[1:] {
		if len(rec) < 7 {
			return fmt.Errorf("report: %s:%d: %d fields, want 7", path, i+2, len(rec))
		}
		row := PeerRow{Scenario: rec[0], Tool: rec[1], Note: rec[6]}
		if row.Samples, err = strconv.Atoi(rec[2]); err != nil {
			return fmt.Errorf("report: %s:%d: samples: %w", path, i+2, err)
		}
		if row.Samples > 0 {
			for j, dst := range []*float64{&row.P50, &row.P95, &row.P99} {
				if *dst, err = strconv.ParseFloat(rec[3+j], 64); err != nil {
					return fmt.Errorf("report: %s:%d: %s: %w", path, i+2, rows[0][3+j], err)
				}
			}
		}
		r.Peers = append(r.Peers, row)
	}
	return nil
}
