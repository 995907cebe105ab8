package offsets

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"sync"
)

// Writer appends records to an offsets.jsonl or a rounds.jsonl file, a round
// at a time. It is safe for concurrent use.
type Writer struct {
	mu      sync.Mutex
	w       io.Writer
	f       *os.File // owned, closed by Close; nil for NewWriter
	meta    Meta
	lines   bytes.Buffer
	enc     *json.Encoder
	err     error // sticky: after a failed write the tail may be torn
	started bool  // the meta line is written
	dropped int64
	size    int64 // bytes in the file: the meta line and every Append
}

// errClosed is returned by Append after Close.
var errClosed = errors.New("offsets: Append after Close")

// Create creates or truncates the file at path, opens it for appending and
// writes the meta line. m.File must say the kind of file; a zero Type,
// Schema, Units, Model or Uncertainty gets its only valid value ("meta",
// Schema, "ns", Model, UncertaintyModel); m.Mode must be one of the modes.
func Create(path string, m Meta) (*Writer, error) {
	m, err := normalizeMeta(m)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	w := newWriter(f, m)
	w.f = f
	if err := w.Append(m); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// NewWriter writes the meta line for m (completed as by Create) to w and
// returns a Writer that appends to w. It writes with one Write call per
// Append and calls w's Sync method, if it has one, after each. Close does
// not close w.
func NewWriter(w io.Writer, m Meta) (*Writer, error) {
	m, err := normalizeMeta(m)
	if err != nil {
		return nil, err
	}
	wr := newWriter(w, m)
	if err := wr.Append(m); err != nil {
		return nil, err
	}
	return wr, nil
}

func newWriter(w io.Writer, m Meta) *Writer {
	wr := &Writer{w: w, meta: m}
	wr.enc = json.NewEncoder(&wr.lines)
	wr.enc.SetEscapeHTML(false)
	return wr
}

// OpenAppend resumes the offsets or rounds file at path: it checks the meta
// line, cuts off a torn final line (one with no trailing newline, left by a
// crash; see Dropped) and returns a Writer that appends after the last whole
// line.
func OpenAppend(path string) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return nil, err
	}
	w, err := resume(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

func resume(f *os.File, path string) (*Writer, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	line, err := readLine(bufio.NewReader(io.NewSectionReader(f, 0, size)))
	lineErr := func(msg string) error { return &LineError{File: path, Line: 1, Msg: msg} }
	switch err {
	case nil:
	case io.EOF:
		return nil, lineErr("expected a meta line, got an empty file")
	case errTorn:
		return nil, lineErr("expected a meta line, got a torn line with no trailing newline")
	default:
		return nil, lineErr("expected a meta line: " + err.Error())
	}
	m, err := decodeMeta(line, "", false)
	if err != nil {
		return nil, lineErr(err.Error())
	}
	// Find the end of the last whole line, reading backwards.
	end := size
	buf := make([]byte, 64<<10)
	for end > 0 {
		n := min(int64(len(buf)), end)
		if _, err := f.ReadAt(buf[:n], end-n); err != nil {
			return nil, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			end = end - n + int64(i) + 1
			break
		}
		end -= n
	}
	w := newWriter(f, m)
	w.f, w.started, w.size = f, true, end
	if end < size {
		if err := f.Truncate(end); err != nil {
			return nil, err
		}
		if err := f.Sync(); err != nil {
			return nil, err
		}
		w.dropped = size - end
	}
	return w, nil
}

// Meta returns the meta line of the file.
func (w *Writer) Meta() Meta { return w.meta }

// Dropped returns the length of the torn line OpenAppend cut off, 0 if none.
func (w *Writer) Dropped() int64 { return w.dropped }

// Append writes records, one JSON object per line, with one Write call and
// then syncs: pass all the records of one round in one call. Records are
// Offset values in an offsets file, Edge and Round values in a rounds file
// (or pointers to them); Append fills in an empty Type. It refuses, writing
// nothing, a record of the wrong kind, a negative id or count, or a value
// out of range (a NaN or an infinity included; see Offset.Check). Once a
// Write or a Sync has failed, every later call returns that error: the
// file may end in a torn line.
func (w *Writer) Append(records ...any) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	w.lines.Reset()
	for i, rec := range records {
		if err := w.encode(rec); err != nil {
			return fmt.Errorf("offsets: Append: record %d: %w", i, err)
		}
	}
	if w.lines.Len() == 0 {
		return nil
	}
	n, err := w.w.Write(w.lines.Bytes())
	if err == nil && n < w.lines.Len() {
		err = io.ErrShortWrite
	}
	if s, ok := w.w.(interface{ Sync() error }); ok && err == nil {
		err = s.Sync()
	}
	if err != nil {
		w.err = fmt.Errorf("offsets: writing: %w", err)
		return w.err
	}
	w.started = true
	w.size += int64(w.lines.Len())
	return nil
}

// Size returns the bytes the file holds: those OpenAppend found (less what
// it cut) and those written since. A long-running node rotates its files
// when offsets.jsonl passes a cap (see Rotate).
func (w *Writer) Size() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.size
}

// encode checks one record and appends its line to w.lines.
func (w *Writer) encode(rec any) error {
	var typ *string
	var spec *recordSpec
	var want, file string // the record's type, the kind of file it belongs in
	if v := reflect.ValueOf(rec); v.Kind() == reflect.Pointer && v.IsNil() {
		return fmt.Errorf("nil %T", rec)
	}
	switch r := rec.(type) {
	case Meta:
		if w.started {
			return errors.New("a meta line may only start a file")
		}
		typ, spec, want = &r.Type, metaSpec, "meta"
		rec = &r
	case Offset, *Offset:
		o := deref[Offset](rec)
		typ, spec, want, file = &o.Type, offsetSpec, "offset", FileOffsets
		rec = o
	case Edge, *Edge:
		e := deref[Edge](rec)
		typ, spec, want, file = &e.Type, edgeSpec, "edge", FileRounds
		rec = e
	case Round, *Round:
		rd := deref[Round](rec)
		typ, spec, want, file = &rd.Type, roundSpec, "round", FileRounds
		rd.Reported, rd.Missing = nonNil(rd.Reported), nonNil(rd.Missing)
		rec = rd
	default:
		return fmt.Errorf("%T is not a record", rec)
	}
	if file != "" && file != w.meta.File {
		return fmt.Errorf("%q records belong in a %s file, not in a %s file", want, file, w.meta.File)
	}
	if *typ == "" {
		*typ = want
	}
	if *typ != want {
		return fmt.Errorf("type: %q, want %q", *typ, want)
	}
	v := reflect.ValueOf(rec).Elem()
	for _, f := range spec.fields {
		if fv := v.Field(f.index); nonNegative[f.name] && fv.CanInt() && fv.Int() < 0 {
			return fmt.Errorf("%s: %d, want %s", f.name, fv.Int(), f.want)
		}
	}
	if msg := checkRecord(rec); msg != "" {
		return errors.New(msg)
	}
	return w.enc.Encode(rec) // the line and its '\n'
}

// deref returns a pointer to a copy of rec, a T or a *T.
func deref[T any](rec any) *T {
	if p, ok := rec.(*T); ok {
		c := *p
		return &c
	}
	c := rec.(T)
	return &c
}

func nonNil(s []int) []int {
	if s == nil {
		return []int{}
	}
	return s
}

// Close closes the file a Writer from Create or OpenAppend owns; later
// Appends fail. A Writer from NewWriter leaves its io.Writer open.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == errClosed {
		return nil
	}
	w.err = errClosed
	if w.f != nil {
		return w.f.Close()
	}
	return nil
}

// normalizeMeta fills in m's fields that have one valid value and checks it.
func normalizeMeta(m Meta) (Meta, error) {
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	def(&m.Type, "meta")
	def(&m.Units, "ns")
	def(&m.Model, Model)
	def(&m.Uncertainty, UncertaintyModel)
	if m.Schema == 0 {
		m.Schema = Schema
	}
	if msg := checkMeta(m, "", false); msg != "" {
		return m, errors.New("offsets: meta: " + msg)
	}
	return m, nil
}
