package combine

import (
	"bufio"
	"compress/gzip"
	"io"
	"strconv"
	"unicode/utf8"
)

// traceJSON streams Chrome trace events in XLA's layout:
// {"displayTimeUnit":"ns","metadata":{"highres-ticks":true},"traceEvents":[…]},
// one process per plane (pid = 1 + plane id) with process_name and
// process_sort_index metadata events, one thread per line (tid =
// display_id, or id when that is 0) with thread_name and
// thread_sort_index, and every event a complete ("X") slice with ts and
// dur in µs, to the ps.
type traceJSON struct {
	gz    *gzip.Writer
	w     *bufio.Writer
	buf   []byte
	first bool
}

func newTraceJSON(w io.Writer) (*traceJSON, error) {
	gz, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
	if err != nil {
		return nil, err
	}
	t := &traceJSON{gz: gz, w: bufio.NewWriterSize(gz, 1<<16), first: true}
	_, err = t.w.WriteString(`{"displayTimeUnit":"ns","metadata":{"highres-ticks":true},"traceEvents":[`)
	return t, err
}

// begin starts one event object.
func (t *traceJSON) begin() {
	t.buf = t.buf[:0]
	if !t.first {
		t.buf = append(t.buf, ',', '\n')
	}
	t.first = false
}

func (t *traceJSON) flush() error {
	_, err := t.w.Write(t.buf)
	return err
}

// process writes the metadata events of a plane.
func (t *traceJSON) process(pid int64, name string) error {
	t.begin()
	t.buf = append(t.buf, `{"ph":"M","pid":`...)
	t.buf = strconv.AppendInt(t.buf, pid, 10)
	t.buf = append(t.buf, `,"name":"process_name","args":{"name":`...)
	t.buf = appendString(t.buf, name)
	t.buf = append(t.buf, `}},`+"\n"+`{"ph":"M","pid":`...)
	t.buf = strconv.AppendInt(t.buf, pid, 10)
	t.buf = append(t.buf, `,"name":"process_sort_index","args":{"sort_index":`...)
	t.buf = strconv.AppendInt(t.buf, pid, 10)
	t.buf = append(t.buf, `}}`...)
	return t.flush()
}

// thread writes the metadata events of a line.
func (t *traceJSON) thread(pid, tid int64, name string) error {
	t.begin()
	t.buf = append(t.buf, `{"ph":"M","pid":`...)
	t.buf = strconv.AppendInt(t.buf, pid, 10)
	t.buf = append(t.buf, `,"tid":`...)
	t.buf = strconv.AppendInt(t.buf, tid, 10)
	t.buf = append(t.buf, `,"name":"thread_name","args":{"name":`...)
	t.buf = appendString(t.buf, name)
	t.buf = append(t.buf, `}},`+"\n"+`{"ph":"M","pid":`...)
	t.buf = strconv.AppendInt(t.buf, pid, 10)
	t.buf = append(t.buf, `,"tid":`...)
	t.buf = strconv.AppendInt(t.buf, tid, 10)
	t.buf = append(t.buf, `,"name":"thread_sort_index","args":{"sort_index":`...)
	t.buf = strconv.AppendInt(t.buf, tid, 10)
	t.buf = append(t.buf, `}}`...)
	return t.flush()
}

// arg is one event argument, rendered as a JSON string.
type arg struct{ key, value string }

// slice writes one complete event.
func (t *traceJSON) slice(pid, tid int64, name string, startPs, durPs int64, args []arg) error {
	t.begin()
	t.buf = append(t.buf, `{"ph":"X","pid":`...)
	t.buf = strconv.AppendInt(t.buf, pid, 10)
	t.buf = append(t.buf, `,"tid":`...)
	t.buf = strconv.AppendInt(t.buf, tid, 10)
	t.buf = append(t.buf, `,"ts":`...)
	t.buf = appendMicros(t.buf, startPs)
	t.buf = append(t.buf, `,"dur":`...)
	t.buf = appendMicros(t.buf, durPs)
	t.buf = append(t.buf, `,"name":`...)
	t.buf = appendString(t.buf, name)
	if len(args) > 0 {
		t.buf = append(t.buf, `,"args":{`...)
		for i, a := range args {
			if i > 0 {
				t.buf = append(t.buf, ',')
			}
			t.buf = appendString(t.buf, a.key)
			t.buf = append(t.buf, ':')
			t.buf = appendString(t.buf, a.value)
		}
		t.buf = append(t.buf, '}')
	}
	t.buf = append(t.buf, '}')
	return t.flush()
}

// close ends the document and the gzip stream (not the file beneath).
func (t *traceJSON) close() error {
	if _, err := t.w.WriteString("]}\n"); err != nil {
		return err
	}
	if err := t.w.Flush(); err != nil {
		return err
	}
	return t.gz.Close()
}

// appendMicros appends ps as µs with six decimals, exactly.
func appendMicros(b []byte, ps int64) []byte {
	if ps < 0 {
		b = append(b, '-')
		if ps == -ps { // MinInt64
			return append(b, "9223372.036854775808"...)
		}
		ps = -ps
	}
	b = strconv.AppendInt(b, ps/1_000_000, 10)
	frac := ps % 1_000_000
	if frac == 0 {
		return b
	}
	b = append(b, '.')
	s := strconv.AppendInt(nil, frac+1_000_000, 10)[1:] // six digits, leading zeros
	for len(s) > 0 && s[len(s)-1] == '0' {
		s = s[:len(s)-1]
	}
	return append(b, s...)
}

// appendString appends s as a JSON string; invalid UTF-8 becomes U+FFFD.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}
