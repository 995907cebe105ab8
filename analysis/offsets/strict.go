package offsets

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// LineError is an error at one line of a file: what was expected there.
type LineError struct {
	File string // the name the reader was given
	Line int    // 1-based
	Msg  string // e.g. `offset_ns: expected a number, got "abc"`
}

// Error returns "FILE:LINE: MSG".
func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// nonNegative names the integer fields that may not be negative.
var nonNegative = map[string]bool{
	"reference_node": true, "node_id": true, "src": true, "dst": true,
	"pairs_count": true, "lost_count": true, "solved_nodes": true,
	"rejected_edges": true, "retries": true, "message_bytes": true,
	"chi2_dof": true,
}

// fieldSpec is one JSON field of a record.
type fieldSpec struct {
	name     string
	index    int
	optional bool   // omitempty: may be absent
	want     string // what a value must be, for messages
	steps    bool   // a []Step, decoded by decodeSteps
	object   bool   // a *SelfCheck, decoded by decodeObject
}

// recordSpec is the JSON shape of one record type.
type recordSpec struct {
	typ    reflect.Type
	fields []fieldSpec
	byName map[string]int
}

func specOf(v any) *recordSpec {
	t := reflect.TypeOf(v)
	s := &recordSpec{typ: t, byName: map[string]int{}}
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		fs := fieldSpec{name: name, index: i, optional: opts == "omitempty"}
		switch k := f.Type.Kind(); {
		case f.Type == reflect.TypeFor[*SelfCheck]():
			fs.want, fs.object = "an object", true
		case k == reflect.Int || k == reflect.Int64:
			fs.want = "an integer"
			if nonNegative[name] {
				fs.want = "a non-negative integer"
			}
		case k == reflect.Uint64:
			fs.want = "a non-negative integer"
		case k == reflect.Float64 || k == reflect.Pointer:
			fs.want = "a number"
		case k == reflect.String:
			fs.want = "a string"
		case k == reflect.Bool:
			fs.want = "true or false"
		case f.Type == reflect.TypeFor[[]Step]():
			fs.want, fs.steps = "an array of steps", true

		case k == reflect.Slice:
			fs.want = "an array of integers"
		default:
			panic("offsets: no JSON kind for " + f.Type.String())
		}
		s.byName[name] = len(s.fields)
		s.fields = append(s.fields, fs)
	}
	return s
}

var (
	metaSpec   = specOf(Meta{})
	offsetSpec = specOf(Offset{})
	edgeSpec   = specOf(Edge{})
	roundSpec  = specOf(Round{})
	stepSpec   = specOf(Step{})
	checkSpec  = specOf(SelfCheck{})
)

// member is one name and value of a JSON object, in the order of the line.
type member struct {
	name string
	raw  json.RawMessage
}

// splitObject parses line as one JSON object.
func splitObject(line []byte) ([]member, error) {
	if len(bytes.TrimSpace(line)) == 0 {
		return nil, errors.New("expected a JSON object, got an empty line")
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("expected a JSON object, got %s", snippet(line))
	}
	var ms []member
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, syntaxError(err, dec, line)
		}
		name := tok.(string) // a key inside an object is a string
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, syntaxError(err, dec, line)
		}
		if seen[name] {
			return nil, fmt.Errorf("duplicate field %q", name)
		}
		seen[name] = true
		ms = append(ms, member{name, raw})
	}
	if _, err := dec.Token(); err != nil {
		return nil, syntaxError(err, dec, line)
	}
	end := dec.InputOffset()
	if _, err := dec.Token(); err != io.EOF {
		rest := line[end:]
		col := end + int64(len(rest)-len(bytes.TrimLeft(rest, " \t\r"))) + 1
		return nil, fmt.Errorf("unexpected data after the JSON object at column %d", col)
	}
	return ms, nil
}

// syntaxError describes err, an error of dec reading line. The column of a
// syntax error is that of the offending byte, found by scanning the line
// afresh: a json.Decoder's SyntaxError offset counts only some of the bytes
// it has read (not those of the keys and values before, for one inside a
// value).
func syntaxError(err error, dec *json.Decoder, line []byte) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return errors.New("invalid JSON: the object is not closed")
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		var raw json.RawMessage
		if e := json.Unmarshal(line, &raw); errors.As(e, &se) && se.Offset <= int64(len(line)) {
			return fmt.Errorf("invalid JSON at column %d: %v", se.Offset, se)
		}
	}
	return fmt.Errorf("invalid JSON near column %d: %v", dec.InputOffset()+1, err)
}

// snippet quotes a value for a message, shortened when long.
func snippet(raw []byte) string {
	s := string(bytes.TrimSpace(raw))
	if r := []rune(s); len(r) > 40 {
		s = string(r[:40]) + "…"
	}
	return s
}

// decodeRecord decodes one line whose "type" must be one of the keys of
// specs, and returns a pointer to the record.
func decodeRecord(line []byte, specs map[string]*recordSpec, expected string) (any, error) {
	ms, err := splitObject(line)
	if err != nil {
		return nil, err
	}
	var spec *recordSpec
	typ := ""
	for _, m := range ms {
		if m.name == "type" {
			if err := json.Unmarshal(m.raw, &typ); err != nil || string(m.raw) == "null" {
				return nil, fmt.Errorf("type: expected %s, got %s", expected, snippet(m.raw))
			}
			if spec = specs[typ]; spec == nil {
				return nil, fmt.Errorf("type: expected %s, got %s", expected, snippet(m.raw))
			}
		}
	}
	if spec == nil {
		return nil, errors.New(`missing field "type"`)
	}
	v := reflect.New(spec.typ)
	if err := decodeFields(ms, spec, v.Elem(), "", typ); err != nil {
		return nil, err
	}
	if msg := checkRecord(v.Interface()); msg != "" {
		return nil, errors.New(msg)
	}
	return v.Interface(), nil
}

// decodeFields decodes the members ms of an object into v, a value of
// spec's type: every field of spec (but the optional ones) and no other,
// each of its kind. For a record, path is "" and typ its type; for an
// object inside one, path names it in messages (e.g. "steps[1]":
// `steps[1].size_ns: expected a number, got "x"`) and typ is "".
func decodeFields(ms []member, spec *recordSpec, v reflect.Value, path, typ string) error {
	in, name := errors.New, func(f string) string { return f }
	if path != "" {
		in = func(msg string) error { return errors.New(path + ": " + msg) }
		name = func(f string) string { return path + "." + f }
	}
	present := make([]bool, len(spec.fields))
	for _, m := range ms {
		i, ok := spec.byName[m.name]
		if !ok {
			msg := fmt.Sprintf("unknown field %q", m.name)
			if typ != "" {
				msg += fmt.Sprintf(" for type %q", typ)
			}
			return in(msg)
		}
		f := spec.fields[i]
		present[i] = true
		fv := v.Field(f.index)
		if f.steps {
			if err := decodeSteps(m.raw, fv, name(f.name)); err != nil {
				return err
			}
			continue
		}
		if f.object {
			ms, err := splitObject(m.raw)
			if string(m.raw) == "null" || err != nil {
				return fmt.Errorf("%s: expected an object, got %s", name(f.name), snippet(m.raw))
			}
			var c SelfCheck
			if err := decodeFields(ms, checkSpec, reflect.ValueOf(&c).Elem(), name(f.name), ""); err != nil {
				return err
			}
			fv.Set(reflect.ValueOf(&c))
			continue
		}
		isNull := string(m.raw) == "null"
		if isNull && fv.Kind() != reflect.Pointer ||
			json.Unmarshal(m.raw, fv.Addr().Interface()) != nil ||
			fv.CanInt() && fv.Int() < 0 && nonNegative[f.name] {
			return fmt.Errorf("%s: expected %s, got %s", name(f.name), f.want, snippet(m.raw))
		}
	}
	var missing []string
	for i, f := range spec.fields {
		if !present[i] && !f.optional {
			missing = append(missing, fmt.Sprintf("%q", f.name))
		}
	}
	switch len(missing) {
	case 0:
		return nil
	case 1:
		return in("missing field " + missing[0])
	}
	return in("missing fields " + strings.Join(missing, ", "))
}

// decodeSteps decodes a steps field: an array of objects, each with
// every field of Step and no other. An empty array reads as no steps;
// null is an error (a record without steps omits the field).
func decodeSteps(raw json.RawMessage, fv reflect.Value, path string) error {
	var elems []json.RawMessage
	if string(raw) == "null" || json.Unmarshal(raw, &elems) != nil {
		return fmt.Errorf("%s: expected an array of steps, got %s", path, snippet(raw))
	}
	var steps []Step
	for i, e := range elems {
		at := fmt.Sprintf("%s[%d]", path, i)
		ms, err := splitObject(e)
		if err != nil {
			return fmt.Errorf("%s: %w", at, err)
		}
		var s Step
		if err := decodeFields(ms, stepSpec, reflect.ValueOf(&s).Elem(), at, ""); err != nil {
			return err
		}
		steps = append(steps, s)
	}
	fv.Set(reflect.ValueOf(steps))
	return nil
}

// schemaWant is what a meta line's schema must be: Schema alone (to
// write, or append to, a file), or any the readers take.
func schemaWant(old bool) (ok func(int) bool, want string) {
	if old {
		return func(n int) bool { return n == Schema || n == OldestSchema }, fmt.Sprintf("%d or %d", Schema, OldestSchema)
	}
	return func(n int) bool { return n == Schema }, fmt.Sprint(Schema)
}

// checkMeta says what is wrong with m for a file of kind file ("" for either
// kind), or "". With old, a meta line of OldestSchema is taken too.
func checkMeta(m Meta, file string, old bool) string {
	schemaOK, schemas := schemaWant(old)
	quote := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	switch {
	case m.Type != "meta":
		return fmt.Sprintf(`type: expected "meta", got %s`, quote(m.Type))
	case !schemaOK(m.Schema):
		return fmt.Sprintf("schema: expected %s, got %d", schemas, m.Schema)
	case file != "" && m.File != file:
		return fmt.Sprintf("file: expected %s, got %s", quote(file), quote(m.File))
	case m.File != FileOffsets && m.File != FileRounds:
		return fmt.Sprintf(`file: expected "offsets" or "rounds", got %s`, quote(m.File))
	case m.Units != "ns":
		return fmt.Sprintf(`units: expected "ns", got %s`, quote(m.Units))
	case m.Reference < 0:
		return fmt.Sprintf("reference_node: expected a non-negative integer, got %d", m.Reference)
	case m.Mode != ModeRounds && m.Mode != ModeWindows && m.Mode != ModeConsensus:
		return fmt.Sprintf(`mode: expected "rounds", "windows" or "consensus", got %s`, quote(m.Mode))
	case m.Model != Model:
		return fmt.Sprintf("model: expected %s, got %s", quote(Model), quote(m.Model))
	case m.Uncertainty != UncertaintyModel:
		return fmt.Sprintf("uncertainty: expected %s, got %s", quote(UncertaintyModel), quote(m.Uncertainty))
	}
	return ""
}

// decodeMeta decodes and checks the meta line of a file of kind file (""
// for either kind); with old, one of OldestSchema too. A meta line of
// another schema is refused for that first, whatever else is wrong with
// it (schema 1 lacks "uncertainty"), and one of schema 1 with what to do
// about it.
func decodeMeta(line []byte, file string, old bool) (Meta, error) {
	schemaOK, schemas := schemaWant(old)
	if ms, err := splitObject(line); err == nil {
		typ, schema := "", Schema // absent or of a wrong kind: decodeRecord says so
		for _, m := range ms {
			var n int
			switch {
			case m.name == "type":
				_ = json.Unmarshal(m.raw, &typ)
			case m.name == "schema" && string(m.raw) != "null" && json.Unmarshal(m.raw, &n) == nil:
				schema = n
			}
		}
		if typ == "meta" && !schemaOK(schema) {
			msg := fmt.Sprintf("schema: expected %s, got %d", schemas, schema)
			if schema == 1 {
				msg += " (written before clock steps and the drift's uncertainty were recorded; " +
					"regenerate it: chronosync estimate RUN_DIR re-solves the run from its probes.bin into RUN_DIR/estimates)"
			}
			return Meta{}, errors.New(msg)
		}
	}
	rec, err := decodeRecord(line, map[string]*recordSpec{"meta": metaSpec}, `"meta"`)
	if err != nil {
		return Meta{}, err
	}
	m := *rec.(*Meta)
	if msg := checkMeta(m, file, old); msg != "" {
		return Meta{}, errors.New(msg)
	}
	return m, nil
}
