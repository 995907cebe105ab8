package xspace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strconv"

	"github.com/chronosync/chronosync/infile"
	"github.com/chronosync/chronosync/trace/xplanepb"
)

// A trace cut at a message boundary (after a whole plane, or before the
// host names) still parses: only its counts tell it from the trace its
// node wrote. So a run records, beside the node traces it writes, each
// one's size, planes and events (FileTraceRecord), and the readers
// (combine, validate) compare a trace with its record where one is there.

// FileTraceRecord is the name of the record a run writes beside its node
// traces: traces.json.
const FileTraceRecord = "traces.json"

// Counts is how much a trace holds.
type Counts struct {
	// Bytes is the size of the trace file; 0 when not known.
	Bytes int64 `json:"bytes"`
	// Planes counts the XSpace's planes; Events the events of all of them.
	Planes int   `json:"planes"`
	Events int64 `json:"events"`
}

// CountOf returns the planes and events of space (Bytes 0).
func CountOf(space *xplanepb.XSpace) Counts {
	c := Counts{Planes: len(space.GetPlanes())}
	for _, p := range space.GetPlanes() {
		for _, l := range p.GetLines() {
			c.Events += int64(len(l.GetEvents()))
		}
	}
	return c
}

// Empty says why a trace of counts c holds nothing to align or check ("no
// planes and no events (0 bytes)", "3 planes and no events"), or "" when
// it has events.
func (c Counts) Empty() string {
	switch {
	case c.Events > 0:
		return ""
	case c.Planes == 0 && c.Bytes == 0:
		return "no planes and no events (0 bytes)"
	case c.Planes == 0:
		return fmt.Sprintf("no planes and no events (%s bytes)", grouped(c.Bytes))
	}
	return fmt.Sprintf("%s and no events", plural(int64(c.Planes), "plane"))
}

// String returns "3 planes and 2,422 events".
func (c Counts) String() string {
	return fmt.Sprintf("%s and %s", plural(int64(c.Planes), "plane"), plural(c.Events, "event"))
}

// Mismatch compares got, a trace's counts, with rec, what the run that
// wrote it recorded: "" when they agree, else, for example, "trace has 2
// planes and 2,400 events; the run recorded 3 planes and 2,422 events: the
// trace is cut". Bytes are compared when both are known (a cut that drops
// only the host names changes no count); a trace with more of anything
// than its record is "not the trace the run wrote".
func Mismatch(got, rec Counts) string {
	bytesDiffer := got.Bytes != 0 && rec.Bytes != 0 && got.Bytes != rec.Bytes
	if got.Planes == rec.Planes && got.Events == rec.Events && !bytesDiffer {
		return ""
	}
	verdict := "the trace is cut"
	if got.Planes > rec.Planes || got.Events > rec.Events || (bytesDiffer && got.Bytes > rec.Bytes) {
		verdict = "it is not the trace the run wrote"
	}
	if got.Planes == rec.Planes && got.Events == rec.Events {
		return fmt.Sprintf("trace has %s bytes, %s; the run recorded %s bytes: %s",
			grouped(got.Bytes), got, grouped(rec.Bytes), verdict)
	}
	return fmt.Sprintf("trace has %s; the run recorded %s: %s", got, rec, verdict)
}

// TraceRecord is traces.json: what a run recorded of the node traces it
// wrote into the directory.
type TraceRecord struct {
	RunID  string       `json:"run_id,omitempty"`
	Traces []TraceEntry `json:"traces"`
}

// TraceEntry is the record of one trace.
type TraceEntry struct {
	// Node is the node whose trace it is.
	Node int `json:"node"`
	// File is the trace's file name, in the record's directory.
	File string `json:"file"`
	Counts
}

// WriteTraceRecord writes r to dir/traces.json, atomically.
func WriteTraceRecord(dir string, r *TraceRecord) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Join(dir, FileTraceRecord), err)
	}
	return WriteFile(filepath.Join(dir, FileTraceRecord), func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}

// ReadTraceRecord reads dir/traces.json: nil, and no error, when there is
// none. It is read as a run manifest is (infile.Manifest: a regular file
// of at most infile.MaxManifest bytes); unknown fields, an entry without a
// file name, a file named twice or a negative count are errors that name
// the file.
func ReadTraceRecord(dir string) (*TraceRecord, error) {
	path := filepath.Join(dir, FileTraceRecord)
	b, err := infile.ReadFile(path, infile.Manifest)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read trace record: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	r := &TraceRecord{}
	if err := dec.Decode(r); err != nil {
		return nil, fmt.Errorf("read %s: byte %d: %w", path, dec.InputOffset(), err)
	}
	seen := map[string]bool{}
	for i, e := range r.Traces {
		switch {
		case e.File == "" || filepath.Base(e.File) != e.File:
			return nil, fmt.Errorf("read %s: traces[%d]: file %q: want a file name in the record's directory", path, i, e.File)
		case seen[e.File]:
			return nil, fmt.Errorf("read %s: traces[%d]: %s is recorded twice", path, i, e.File)
		case e.Bytes < 0 || e.Planes < 0 || e.Events < 0:
			return nil, fmt.Errorf("read %s: traces[%d]: negative count", path, i)
		}
		seen[e.File] = true
	}
	return r, nil
}

// Lookup returns the record of the trace named file.
func (r *TraceRecord) Lookup(file string) (TraceEntry, bool) {
	if r == nil {
		return TraceEntry{}, false
	}
	for _, e := range r.Traces {
		if e.File == file {
			return e, true
		}
	}
	return TraceEntry{}, false
}

// plural returns "1 plane" or "2,422 planes".
func plural(n int64, one string) string {
	if n == 1 {
		return "1 " + one
	}
	return grouped(n) + " " + one + "s"
}

// grouped writes n with thousands separators: 2,422.
func grouped(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}
