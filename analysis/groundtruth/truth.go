// Package groundtruth records what a simulated run's clocks really did and
// measures exported clock models against it. For every node and window it
// keeps, at the window's start, middle and end, the node's noise-free clock
// reading and the reference node's reading at the same true time; an
// offsets.jsonl record is then judged by how far its global time for the
// node's reading lies from the reference model's global time for the
// reference's reading.
package groundtruth

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/chronosync/chronosync/infile"
)

// Point is one instant of true time seen from a node and from the reference:
// Local is the node's noise-free clock, Ref the reference node's.
type Point struct {
	Local int64 `json:"local_ns"`
	Ref   int64 `json:"ref_ns"`
}

// Window is the truth of one node's window.
type Window struct {
	Type   string  `json:"type"` // "truth"
	Round  uint64  `json:"round_id"`
	Node   int     `json:"node_id"`
	Start  int64   `json:"window_start_ns"`
	End    int64   `json:"window_end_ns"`
	Points []Point `json:"points"` // start, middle, end
}

// Meta is the first line of truth.jsonl.
type Meta struct {
	Type      string `json:"type"` // "meta"
	Schema    int    `json:"schema"`
	File      string `json:"file"` // "truth"
	RunID     string `json:"run_id"`
	Reference int    `json:"reference_node"`
	Units     string `json:"units"`
}

// Writer appends truth records, one JSON object per line.
type Writer struct {
	w   *bufio.Writer
	enc *json.Encoder
}

// NewWriter writes the meta line to w.
func NewWriter(w io.Writer, m Meta) (*Writer, error) {
	m.Type, m.Schema, m.File, m.Units = "meta", 1, "truth", "ns"
	bw := bufio.NewWriter(w)
	tw := &Writer{w: bw, enc: json.NewEncoder(bw)}
	if err := tw.enc.Encode(m); err != nil {
		return nil, fmt.Errorf("truth meta: %w", err)
	}
	return tw, nil
}

// Write appends one window.
func (t *Writer) Write(w Window) error {
	w.Type = "truth"
	return t.enc.Encode(w)
}

// Flush writes buffered lines.
func (t *Writer) Flush() error { return t.w.Flush() }

// Read reads truth.jsonl.
func Read(path string) (Meta, []Window, error) {
	f, err := infile.Open(path, infile.GroundTruth)
	if err != nil {
		return Meta{}, nil, err
	}
	defer f.Close()
	return Decode(f, path)
}

// Decode reads truth records from r; name is used in errors.
func Decode(r io.Reader, name string) (Meta, []Window, error) {
	var m Meta
	var out []Window
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		if line == 1 {
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m.Type != "meta" || m.File != "truth" {
				return m, nil, fmt.Errorf("%s:1: expected the truth meta line", name)
			}
			if m.Schema != 1 {
				return m, nil, fmt.Errorf("%s:1: schema %d, expected 1", name, m.Schema)
			}
			continue
		}
		var w Window
		if err := json.Unmarshal(sc.Bytes(), &w); err != nil {
			return m, nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		if w.Type != "truth" || len(w.Points) == 0 {
			return m, nil, fmt.Errorf("%s:%d: expected a truth record with points", name, line)
		}
		out = append(out, w)
	}
	if err := sc.Err(); err != nil {
		return m, nil, fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	if line == 0 {
		return m, nil, errors.New(name + ": empty file, expected the truth meta line")
	}
	return m, out, nil
}
