package combine

import (
	"io"
	"strconv"

	"github.com/chronosync/chronosync/trace/chromejson"
	"github.com/klauspost/compress/gzip"
)

// traceJSON streams Chrome trace events in XLA's layout:
// {"displayTimeUnit":"ns","metadata":{"highres-ticks":true},"traceEvents":[…]},
// one process per plane (pid = 1 + plane id) with process_name,
// process_labels and process_sort_index metadata events (jsonproc.go),
// one thread per line (tid = display_id, or id when that is 0) with
// thread_name and thread_sort_index, every event a complete ("X") slice
// with ts and dur in µs, to the ps, and its stats as args of their kind,
// each followed by its flow events (jsonargs.go); then each clock node's
// offsets as counters (jsoncounters.go).
//
// The text is formatted into chunks of jsonChunk bytes, which a pipeline
// goroutine compresses (gzip.BestSpeed) while the next chunk is formatted:
// one gzip stream, fed the same bytes in the same chunks whatever the
// scheduling, so the output is byte-identical for the same inputs.
type traceJSON struct {
	gz    *gzip.Writer
	pipe  *pipeWriter
	buf   []byte // the chunk being formatted
	first bool
}

// jsonChunk is the size of the chunks handed to the gzip goroutine.
const jsonChunk = 1 << 20

func newTraceJSON(w io.Writer) (*traceJSON, error) {
	gz, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
	if err != nil {
		return nil, err
	}
	t := &traceJSON{gz: gz, pipe: newPipeWriter(gz, "the Chrome trace JSON (gzip)", 2, jsonChunk+4096), first: true}
	t.buf = t.pipe.buffer()
	t.buf = append(t.buf, `{"displayTimeUnit":"ns","metadata":{"highres-ticks":true},"traceEvents":[`...)
	return t, nil
}

// begin starts one event object.
func (t *traceJSON) begin() {
	if !t.first {
		t.buf = append(t.buf, ',', '\n')
	}
	t.first = false
}

// flush ends an event: a full chunk goes to the gzip goroutine.
func (t *traceJSON) flush() error {
	if len(t.buf) < jsonChunk {
		return nil
	}
	var err error
	t.buf, err = t.pipe.write(t.buf)
	return err
}

// process writes the metadata events of a plane's process: its name
// (jp.label), its labels (jp.name, the plane's name in the combined
// XSpace, which Perfetto shows beside the name) and its sort index.
func (t *traceJSON) process(pid int64, jp jsonProcess) error {
	t.begin()
	t.buf = appendMetaJSON(t.buf, pid, "process_name", "name", jp.label)
	t.buf = append(t.buf, ',', '\n')
	t.buf = appendMetaJSON(t.buf, pid, "process_labels", "labels", jp.name)
	t.buf = append(t.buf, `,`+"\n"+`{"ph":"M","pid":`...)
	t.buf = strconv.AppendInt(t.buf, pid, 10)
	t.buf = append(t.buf, `,"name":"process_sort_index","args":{"sort_index":`...)
	t.buf = strconv.AppendInt(t.buf, int64(jp.sort), 10)
	t.buf = append(t.buf, `}}`...)
	return t.flush()
}

// appendMetaJSON appends a process metadata event name whose one arg key
// is the string value.
func appendMetaJSON(b []byte, pid int64, name, key, value string) []byte {
	b = append(b, `{"ph":"M","pid":`...)
	b = strconv.AppendInt(b, pid, 10)
	b = append(b, `,"name":`...)
	b = chromejson.AppendString(b, name)
	b = append(b, `,"args":{`...)
	b = chromejson.AppendString(b, key)
	b = append(b, ':')
	b = chromejson.AppendString(b, value)
	return append(b, `}}`...)
}

// thread writes the metadata events of a line.
func (t *traceJSON) thread(pid, tid int64, name string) error {
	t.begin()
	t.buf = appendThreadJSON(t.buf, pid, tid, name)
	return t.flush()
}

// appendThreadJSON appends the thread_name and thread_sort_index events of
// a line.
func appendThreadJSON[S ~string | ~[]byte](b []byte, pid, tid int64, name S) []byte {
	b = append(b, `{"ph":"M","pid":`...)
	b = strconv.AppendInt(b, pid, 10)
	b = append(b, `,"tid":`...)
	b = strconv.AppendInt(b, tid, 10)
	b = append(b, `,"name":"thread_name","args":{"name":`...)
	b = chromejson.AppendString(b, name)
	b = append(b, `}},`+"\n"+`{"ph":"M","pid":`...)
	b = strconv.AppendInt(b, pid, 10)
	b = append(b, `,"tid":`...)
	b = strconv.AppendInt(b, tid, 10)
	b = append(b, `,"name":"thread_sort_index","args":{"sort_index":`...)
	b = strconv.AppendInt(b, tid, 10)
	return append(b, `}}`...)
}

// appendSliceStart appends the start of one event (a complete slice)
// that every slice of the thread shares, up to its ts; appendSliceRest
// appends the rest, up to its name (a JSON string formatted already): its
// args and the closing brace follow.
func appendSliceStart(b []byte, pid, tid int64) []byte {
	b = append(b, `{"ph":"X","pid":`...)
	b = strconv.AppendInt(b, pid, 10)
	b = append(b, `,"tid":`...)
	b = strconv.AppendInt(b, tid, 10)
	return append(b, `,"ts":`...)
}

// appendSliceRest appends a slice's ts, dur and name, after
// appendSliceStart's (see there).
func appendSliceRest(b, name []byte, startPs, durPs int64) []byte {
	b = chromejson.AppendMicros(b, startPs, chromejson.Picoseconds, chromejson.Trim)
	b = append(b, `,"dur":`...)
	b = chromejson.AppendMicros(b, durPs, chromejson.Picoseconds, chromejson.Trim)
	b = append(b, `,"name":`...)
	return append(b, name...)
}

// raw writes events formatted already, each one preceded by ",\n" (so
// never the first event: the process metadata comes first).
func (t *traceJSON) raw(b []byte) error {
	t.first = false
	for len(b) > 0 {
		n := min(len(b), max(0, jsonChunk-len(t.buf)))
		t.buf = append(t.buf, b[:n]...)
		b = b[n:]
		if len(t.buf) >= jsonChunk {
			var err error
			if t.buf, err = t.pipe.write(t.buf); err != nil {
				return err
			}
		}
	}
	return nil
}

// close ends the document and the gzip stream (not the file beneath).
func (t *traceJSON) close() error {
	t.buf = append(t.buf, "]}\n"...)
	if _, err := t.pipe.write(t.buf); err != nil {
		t.pipe.close()
		return err
	}
	t.buf = nil
	if err := t.pipe.close(); err != nil {
		return err
	}
	return t.gz.Close()
}

// abort stops the gzip goroutine after an error elsewhere.
func (t *traceJSON) abort() { t.pipe.close() }

// counter writes one sample of a counter track: a "C" event named name
// whose one series is key.
func (t *traceJSON) counter(pid int64, name, key string, ps int64, v float64) error {
	t.begin()
	t.buf = append(t.buf, `{"ph":"C","pid":`...)
	t.buf = strconv.AppendInt(t.buf, pid, 10)
	t.buf = append(t.buf, `,"ts":`...)
	t.buf = chromejson.AppendMicros(t.buf, ps, chromejson.Picoseconds, chromejson.Trim)
	t.buf = append(t.buf, `,"name":`...)
	t.buf = chromejson.AppendString(t.buf, name)
	t.buf = append(t.buf, `,"args":{`...)
	t.buf = chromejson.AppendString(t.buf, key)
	t.buf = append(t.buf, ':')
	t.buf = chromejson.AppendFloat(t.buf, v)
	t.buf = append(t.buf, `}}`...)
	return t.flush()
}
