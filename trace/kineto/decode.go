package kineto

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/chronosync/chronosync/infile"
)

// Read reads the Kineto trace at path, plain or gzipped (recognised by the
// gzip magic bytes, whatever the file's name). Errors are *Error values
// naming path and a byte offset, except a failure to open the file.
func Read(path string) (*Trace, error) {
	f, err := infile.Open(path, infile.Kineto)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	return Decode(f, path)
}

// Decode reads a Kineto trace from r, plain or gzipped (recognised by the
// gzip magic bytes 1f 8b). name names the trace in Trace.Name and in errors.
//
// The whole input must be one well-formed trace: a truncated gzip stream or
// JSON text, or data after the top-level value, is an error, never a partial
// trace; so is a time beyond the limits (see MaxTimeNs), a key that an
// object of the trace (the top-level one, distributedInfo, an event, its
// args, anything nested) has twice, and an event without its phase ("ph")
// or without a member its phase needs ("X": name, ts and dur; see
// required.go). Errors are *Error values: the name, the byte offset in the
// JSON text (of the decompressed stream for gzip) and the place, e.g.
//
//	read x.json: byte 1234: traceEvents[17].ts: want a number, got "abc"
//	read x.json: byte 24: baseTimeNanoseconds: 9000000000000000000 ns is out of range (|baseTimeNanoseconds| ≤ 4000000000000000000 ns)
//	read x.json: byte 1234: baseTimeNanoseconds: duplicate key (first at byte 56)
//	read x.json: byte 17: traceEvents[0]: want an event with "ph" (its phase, e.g. "X"), got none
func Decode(r io.Reader, name string) (*Trace, error) {
	return DecodeFilter(r, name, nil)
}

// DecodeFilter is Decode keeping only the events for which keep returns
// true (all of them when keep is nil); the others are decoded, checked and
// dropped, so memory is bounded by the kept events.
func DecodeFilter(r io.Reader, name string, keep func(Event) bool) (*Trace, error) {
	return DecodeWith(r, name, DecodeOptions{Keep: keep})
}

// DecodeOptions configure [DecodeWith] and [ReadWith].
type DecodeOptions struct {
	// Keep, when not nil, keeps only the events for which it returns true;
	// the others are decoded, checked and dropped, so memory is bounded by
	// the kept events.
	Keep func(Event) bool
	// Raw keeps every kept event's JSON text in Event.Raw, for a lossless
	// conversion (see [ToXSpace]): its args in their order and with their
	// JSON types, and the members Event has no field for ("id", "bp", "s",
	// ...).
	Raw bool
}

// ReadWith is [Read] with options.
func ReadWith(path string, o DecodeOptions) (*Trace, error) {
	f, err := infile.Open(path, infile.Kineto)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	return DecodeWith(f, path, o)
}

// DecodeWith is [Decode] with options.
//
// A gzipped input decompresses to at most [infile.GzipLimit] of its size:
// when r can seek (a file), the whole stream is first decompressed into
// io.Discard and its size checked, so that a bomb is refused before an
// event is decoded; otherwise the cap follows the compressed bytes read.
// Bytes after the last gzip member are an error, not ignored.
func DecodeWith(r io.Reader, name string, o DecodeOptions) (*Trace, error) {
	d, closeGzip, err := newDecoder(r, name, o)
	if err != nil {
		return nil, err
	}
	defer closeGzip()
	t := &Trace{Name: name, Rank: -1}
	if err := d.document(t); err != nil {
		return nil, err
	}
	return t, nil
}

// newDecoder sets up a decoder of r, through a gzip reader when r starts
// with gzip's magic bytes; the function it returns closes that reader.
func newDecoder(r io.Reader, name string, o DecodeOptions) (*decoder, func(), error) {
	br := bufio.NewReader(r)
	d := &decoder{name: name, keep: o.Keep, raw: o.Raw, intern: map[string]string{}}
	var src io.Reader = br
	closeGzip := func() {}
	magic, err := br.Peek(2)
	switch {
	case infile.IsGzip(magic):
		zr, n, err := openGzip(r, br)
		if err != nil {
			return nil, nil, &Error{Name: name, Offset: n, Decompressed: true, Err: err}
		}
		src, d.gzip, closeGzip = zr, true, func() { zr.Close() }
	case err != nil && err != io.EOF:
		return nil, nil, &Error{Name: name, Err: err}
	}
	d.src = &window{r: src}
	d.dec = json.NewDecoder(d.src)
	d.dec.UseNumber()
	return d, closeGzip, nil
}

// openGzip returns the decompressed stream of r, which br (over r) has
// peeked at. When r seeks, the stream is checked whole first (see
// [infile.CheckGzip]) and read again from its start; the int is the number
// of decompressed bytes at a failure of that check.
func openGzip(r io.Reader, br *bufio.Reader) (*infile.Gunzip, int64, error) {
	if rs, ok := r.(io.ReadSeeker); ok {
		if pos, err := rs.Seek(0, io.SeekCurrent); err == nil {
			start := pos - int64(br.Buffered())
			end, err := rs.Seek(0, io.SeekEnd)
			if err == nil {
				_, err = rs.Seek(start, io.SeekStart)
			}
			if err != nil {
				return nil, 0, err
			}
			if n, err := infile.CheckGzip(rs); err != nil {
				return nil, n, err
			}
			zr, err := infile.NewGunzip(rs, end-start)
			return zr, 0, err
		}
	}
	zr, err := infile.NewGunzip(br, -1)
	return zr, 0, err
}

// maxIntern bounds the strings a decoder interns, so that memory stays
// bounded by the kept events when names are all different.
const maxIntern = 4096

// decoder is the state of one Decode.
type decoder struct {
	dec    *json.Decoder
	src    *window // what dec reads, kept from the last token's or value's start
	start  int64   // the offset at which the last token read starts
	name   string
	gzip   bool
	keep   func(Event) bool
	raw    bool              // keep events' JSON text (DecodeOptions.Raw)
	val    json.RawMessage   // the last value read, reused
	intern map[string]string // phases, categories, ids, names, arg keys
	buf    bytes.Buffer      // for compacting nested args
	uniq   uniqueness        // the duplicate-key check of values
	// lo and hi are the earliest and the latest of the events' times (ts
	// and ts + dur), checked with baseTimeNanoseconds once the whole
	// document is read (it may come after traceEvents).
	lo, hi extreme
}

// extreme is one time of an event, for the checks with the base.
type extreme struct {
	set     bool
	v       int64 // ts, or ts + dur for an end
	ts, dur int64 // the event's ts and dur
	end     bool  // v is the event's end
	event   int   // its index in traceEvents
	off     int64 // the offset of its ts (dur for an end) value
}

// path is a place in the document: a top-level key, or an event and one of
// its keys. It is rendered only for an error.
type path struct {
	event int    // index in traceEvents, or -1
	key   string // "" for the event itself or the top level
}

var top = path{event: -1}

func topKey(k string) path { return path{event: -1, key: k} }

func (p path) String() string {
	if p.event < 0 {
		return p.key
	}
	s := "traceEvents[" + strconv.Itoa(p.event) + "]"
	if p.key != "" {
		s += "." + p.key
	}
	return s
}

// errUnexpectedEnd is a JSON text that ends inside the top-level value.
var errUnexpectedEnd = errors.New("unexpected end of JSON input")

// fail turns an error of the json.Decoder (or of the input) into an *Error
// at p, with the most precise offset it can find: for a syntax error the
// offending byte, for a truncated input or a read error the number of bytes
// read.
func (d *decoder) fail(p path, err error) error {
	buffered, _ := io.ReadAll(d.dec.Buffered())
	off := d.dec.InputOffset()
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &syn):
		// The decoder's own offset counts only some of the bytes it has
		// read; re-scan what is left of its buffer, which reaches past the
		// offending byte, for the exact place.
		var rest json.RawMessage
		var at *json.SyntaxError
		if e := json.NewDecoder(bytes.NewReader(buffered)).Decode(&rest); errors.As(e, &at) && at.Offset > 0 {
			off += at.Offset - 1
		}
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		off += int64(len(buffered))
		err = errUnexpectedEnd
	default:
		off += int64(len(buffered))
	}
	return &Error{Name: d.name, Offset: off, Decompressed: d.gzip, Where: p.String(), Err: err}
}

// failAt is an error about the value that starts at off.
func (d *decoder) failAt(off int64, p path, format string, args ...any) error {
	return &Error{Name: d.name, Offset: off, Decompressed: d.gzip, Where: p.String(), Err: fmt.Errorf(format, args...)}
}

// token reads the next token; d.start is where it starts.
func (d *decoder) token(p path) (json.Token, error) {
	tok, err := d.next()
	if err != nil {
		return nil, d.fail(p, err)
	}
	return tok, nil
}

// next reads the next token with the json.Decoder's Token, and sets d.start
// to the offset at which it starts: past the space and the ',' or ':' the
// decoder skips before it, in the bytes the window kept from the offset the
// decoder stood at.
func (d *decoder) next() (json.Token, error) {
	mark := d.dec.InputOffset()
	d.src.keepFrom(mark)
	tok, err := d.dec.Token()
	if err == nil {
		d.start = d.src.skip(mark)
	}
	return tok, err
}

// delim reads the next token, which must be want ('[', '}' or ']').
func (d *decoder) delim(p path, want json.Delim) error {
	tok, err := d.token(p)
	if err != nil {
		return err
	}
	if tok != want {
		return d.failAt(d.start, p, "want %s, got %s", delimName(want), describeToken(tok))
	}
	return nil
}

// value reads the next value into d.val and returns its start offset.
func (d *decoder) value(p path) (int64, error) {
	d.src.keepFrom(d.dec.InputOffset()) // nothing before it is needed
	if err := d.dec.Decode(&d.val); err != nil {
		return 0, d.fail(p, err)
	}
	return d.dec.InputOffset() - int64(len(d.val)), nil
}

// document reads the top-level value and checks that nothing follows it.
func (d *decoder) document(t *Trace) error {
	tok, err := d.token(top)
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		if err := d.object(t); err != nil {
			return err
		}
	case json.Delim('['):
		if err := d.events(t); err != nil {
			return err
		}
	default:
		return d.failAt(d.start, top, "want a JSON object or array, got %s", describeToken(tok))
	}
	switch _, err := d.next(); {
	case err == io.EOF:
	case err != nil:
		return d.fail(top, err)
	default:
		return d.failAt(d.start, top, "unexpected data after the top-level value")
	}
	return d.checkBase(t)
}

// object reads the top-level object after its '{'. A key may appear once
// (see unique.go).
func (d *decoder) object(t *Trace) error {
	keys := map[string]int64{} // key → the offset of its first appearance
	for d.dec.More() {
		tok, err := d.token(top)
		if err != nil {
			return err
		}
		k, _ := tok.(string) // the json.Decoder checks that it is a key
		p := topKey(k)
		if first, dup := keys[k]; dup {
			return d.failAt(d.start, p, "duplicate key (first at byte %d)", first)
		}
		if len(keys) == MaxTopKeys {
			return d.failAt(d.start, p, "one key more than the top-level object may have (%d, kineto.MaxTopKeys)", MaxTopKeys)
		}
		keys[k] = d.start
		switch k {
		case "traceEvents":
			if err := d.delim(p, '['); err != nil {
				return err
			}
			if err := d.events(t); err != nil {
				return err
			}
		case "distributedInfo":
			if err := d.distributedInfo(t); err != nil {
				return err
			}
		case "baseTimeNanoseconds":
			off, err := d.value(p)
			if err != nil {
				return err
			}
			if string(d.val) == "null" {
				break
			}
			v, err := integer(d.val)
			if err == nil && !inRange(v) || errors.Is(err, errRange) {
				err = outOfRange(k, describe(d.val)+" ns", strconv.FormatInt(MaxTimeNs, 10)+" ns")
			}
			if err != nil {
				return d.failAt(off, p, "%v", err)
			}
			t.BaseTimeNs = v
		default:
			off, err := d.value(p)
			if err != nil {
				return err
			}
			if err := d.unique(off, p); err != nil {
				return err
			}
		}
	}
	if err := d.delim(top, '}'); err != nil {
		return err
	}
	if _, seen := keys["traceEvents"]; !seen {
		return d.failAt(d.dec.InputOffset(), top, "no traceEvents")
	}
	return nil
}

// distributedInfo reads the distributedInfo object.
func (d *decoder) distributedInfo(t *Trace) error {
	p := topKey("distributedInfo")
	start, err := d.value(p)
	if err != nil {
		return err
	}
	switch d.val[0] {
	case 'n': // null
		return nil
	case '{':
	default:
		return d.failAt(start, p, "want an object, got %s", describe(d.val))
	}
	if err := d.unique(start, p); err != nil {
		return err
	}
	rankOff := int64(-1)
	for m := newMembers(d.val); ; {
		key, val, off, ok := m.next()
		if !ok {
			break
		}
		k := unquote(key)
		if string(val) == "null" {
			continue
		}
		var v int64
		switch k {
		case "rank":
			v, err = integer(val)
			if err == nil && (v < 0 || v > math.MaxInt32) {
				err = fmt.Errorf("want a rank from 0 to %d, got %d", math.MaxInt32, v)
			}
			t.Rank, rankOff = int(v), start+int64(off)
		case "world_size":
			v, err = integer(val)
			if err == nil && (v < 1 || v > math.MaxInt32) {
				err = fmt.Errorf("want a world size from 1 to %d, got %d", math.MaxInt32, v)
			}
			t.WorldSize = int(v)
		case "backend":
			t.Backend, err = text(val)
		}
		if err != nil {
			return d.failAt(start+int64(off), topKey(p.key+"."+k), "%v", err)
		}
	}
	if rankOff >= 0 && t.WorldSize > 0 && t.Rank >= t.WorldSize {
		return d.failAt(rankOff, topKey(p.key+".rank"), "rank %d is not below the job's world_size %d", t.Rank, t.WorldSize)
	}
	return nil
}

// events reads the events array after its '['.
func (d *decoder) events(t *Trace) error {
	for i := 0; d.dec.More(); i++ {
		var ev Event
		if err := d.event(i, &ev); err != nil {
			return err
		}
		if d.keep == nil || d.keep(ev) {
			if d.raw {
				ev.Raw = bytes.Clone(d.val)
			}
			t.Events = append(t.Events, ev)
		}
	}
	return d.delim(topKey("traceEvents"), ']')
}

// event reads traceEvents[i]: the json.Decoder reads (and checks) the whole
// event, which is then picked apart.
func (d *decoder) event(i int, ev *Event) error {
	start, err := d.value(path{event: i})
	if err != nil {
		return err
	}
	if d.val[0] != '{' {
		return d.failAt(start, path{event: i}, "want an object, got %s", describe(d.val))
	}
	if err := d.unique(start, path{event: i}); err != nil {
		return err
	}
	tsOff, durOff := start, start // where ts and dur are, for the errors of their sum
	var has present               // the members it has (not null)
	for m := newMembers(d.val); ; {
		key, val, off, ok := m.next()
		if !ok {
			if err := has.check(ev); err != nil {
				return d.failAt(start, path{event: i}, "%v", err)
			}
			return d.times(i, ev, tsOff, durOff)
		}
		if string(val) == "null" {
			continue // null is absent
		}
		if bytes.IndexByte(key, '\\') < 0 {
			key = key[1 : len(key)-1]
		} else {
			key = []byte(unquote(key))
		}
		switch string(key) {
		case "ph":
			ev.Ph, err = d.text(val)
			has.ph = true
		case "name":
			ev.Name, err = d.text(val)
			has.name = true
		case "cat":
			ev.Cat, err = d.text(val)
		case "pid":
			ev.Pid, err = d.id(val)
		case "tid":
			ev.Tid, err = d.id(val)
		case "ts":
			ev.TsNs, err = micros(val, "ts")
			tsOff, has.ts = start+int64(off), true
		case "dur":
			ev.DurNs, err = micros(val, "dur")
			durOff, has.dur = start+int64(off), true
		case "args":
			ev.Args, err = d.args(val)
		default:
			continue
		}
		if err != nil {
			return d.failAt(start+int64(off), path{event: i, key: string(key)}, "%v", err)
		}
	}
}

// unique checks d.val, the value at off, at p, for an object with a key
// twice: an error at the second key, naming the first's offset.
func (d *decoder) unique(off int64, p path) error {
	if c := d.val[0]; c != '{' && c != '[' {
		return nil
	}
	k, dup := d.uniq.check(d.val)
	if !dup {
		return nil
	}
	if p.event >= 0 {
		p.key = strings.TrimPrefix(k.where, ".")
	} else {
		p.key += k.where
	}
	return d.failAt(off+int64(k.at), p, "duplicate key (first at byte %d)", off+int64(k.first))
}

// times checks the sum of the times of ev, traceEvents[i] (each is within
// the limits, as micros read it), and keeps them as the extremes they are,
// for checkBase.
func (d *decoder) times(i int, ev *Event, tsOff, durOff int64) error {
	if key, err := checkEvent(0, ev.TsNs, ev.DurNs); err != nil {
		return d.failAt(durOff, path{event: i, key: key}, "%v", err)
	}
	for _, x := range [...]extreme{
		{set: true, v: ev.TsNs, ts: ev.TsNs, dur: ev.DurNs, event: i, off: tsOff},
		{set: true, v: ev.TsNs + ev.DurNs, ts: ev.TsNs, dur: ev.DurNs, end: true, event: i, off: durOff},
	} {
		if !d.lo.set || x.v < d.lo.v {
			d.lo = x
		}
		if !d.hi.set || x.v > d.hi.v {
			d.hi = x
		}
	}
	return nil
}

// checkBase checks the events' times with t.BaseTimeNs (read wherever it
// is in the document): the earliest and the latest of them are enough. An
// error is at the event's ts or dur, the earlier in the file of the two.
func (d *decoder) checkBase(t *Trace) error {
	var bad []extreme
	for _, x := range [...]extreme{d.lo, d.hi} {
		if x.set && !inRange(t.BaseTimeNs+x.v) {
			bad = append(bad, x)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	x := slices.MinFunc(bad, func(a, b extreme) int { return cmp.Compare(a.off, b.off) })
	if x.end {
		return d.failAt(x.off, path{event: x.event, key: "dur"}, "%v", sumOutOfRange("baseTimeNanoseconds + ts + dur", t.BaseTimeNs, x.ts, x.dur))
	}
	return d.failAt(x.off, path{event: x.event, key: "ts"}, "%v", sumOutOfRange("baseTimeNanoseconds + ts", t.BaseTimeNs, x.ts))
}

// str returns string(b), interned while the table has room.
func (d *decoder) str(b []byte) string {
	if s, ok := d.intern[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(d.intern) < maxIntern {
		d.intern[s] = s
	}
	return s
}

// text is a JSON string's value, interned.
func (d *decoder) text(raw []byte) (string, error) {
	if raw[0] != '"' {
		return "", fmt.Errorf("want a string, got %s", describe(raw))
	}
	if body := raw[1 : len(raw)-1]; bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
		return d.str(body), nil
	}
	return unquote(raw), nil
}

// text is a JSON string's value.
func text(raw []byte) (string, error) {
	if raw[0] != '"' {
		return "", fmt.Errorf("want a string, got %s", describe(raw))
	}
	return unquote(raw), nil
}

// unquote is the value of a JSON string the json.Decoder has checked.
func unquote(raw []byte) string {
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
		return string(body)
	}
	var s string
	_ = json.Unmarshal(raw, &s) // checked syntax: cannot fail
	return s
}

// id is a pid or tid: an integer in decimal, or a string as it is.
func (d *decoder) id(raw []byte) (string, error) {
	if raw[0] == '"' {
		return d.text(raw)
	}
	if v, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		if s := strconv.FormatInt(v, 10); s != string(raw) {
			return s, nil // "-0"
		}
		return d.str(raw), nil
	}
	return "", fmt.Errorf("want an integer or a string, got %s", describe(raw))
}

// micros is a timestamp or duration in microseconds, as a JSON number or a
// string holding one, in nanoseconds; key ("ts" or "dur") names it in the
// error of a value beyond MaxTimeNs.
func micros(raw []byte, key string) (int64, error) {
	s := string(raw)
	if raw[0] == '"' {
		s = unquote(raw)
	}
	v, _, err := decimal(s, 3)
	switch {
	case errors.Is(err, errSyntax):
		return 0, fmt.Errorf("want a number, got %s", describe(raw))
	case err != nil || !inRange(v):
		return 0, outOfRange(key, describe(raw)+" µs", strconv.FormatInt(maxTimeUs, 10)+" µs")
	}
	return v, nil
}

// integer is an integer, as a JSON number or a string holding one; the
// error wraps errRange when it is one beyond the int64 range.
func integer(raw []byte) (int64, error) {
	s := string(raw)
	if raw[0] == '"' {
		s = unquote(raw)
	}
	v, exact, err := decimal(s, 0)
	switch {
	case errors.Is(err, errRange):
		return 0, fmt.Errorf("%s is %w", describe(raw), err)
	case err != nil || !exact:
		return 0, fmt.Errorf("want an integer, got %s", describe(raw))
	}
	return v, nil
}

// args renders an event's args object (whose keys the event's check found
// unique).
func (d *decoder) args(raw []byte) (map[string]string, error) {
	if raw[0] != '{' {
		return nil, fmt.Errorf("want an object, got %s", describe(raw))
	}
	out := map[string]string{}
	for m := newMembers(raw); ; {
		key, val, _, ok := m.next()
		if !ok {
			return out, nil
		}
		k, _ := d.text(key)
		switch val[0] {
		case '"':
			out[k] = unquote(val)
		case '{', '[':
			d.buf.Reset()
			if err := json.Compact(&d.buf, val); err != nil {
				return nil, fmt.Errorf("%s: %w", k, err) // checked JSON: cannot happen
			}
			// Compact copies string bytes as they are: invalid UTF-8
			// becomes U+FFFD, as unquote makes it in plain strings, or
			// the XSpace would not marshal.
			out[k] = strings.ToValidUTF8(d.buf.String(), "\uFFFD")
		default:
			out[k] = string(val)
		}
	}
}

// describe names a JSON value for an error message: strings, numbers and
// literals as written (shortened past 40 bytes), arrays and objects by kind.
func describe(raw []byte) string {
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	}
	const max = 40
	if len(raw) > max {
		n := max
		for n > 0 && !utf8.RuneStart(raw[n]) {
			n--
		}
		return string(raw[:n]) + "…"
	}
	return string(raw)
}

// describeToken names a JSON token for an error message.
func describeToken(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		return delimName(v)
	case string:
		return describe([]byte(strconv.Quote(v)))
	case nil:
		return "null"
	default:
		return describe([]byte(fmt.Sprint(v)))
	}
}

// delimName names a delimiter for an error message.
func delimName(d json.Delim) string {
	switch d {
	case '{':
		return "an object"
	case '[':
		return "an array"
	}
	return fmt.Sprintf("%q", string(d))
}
