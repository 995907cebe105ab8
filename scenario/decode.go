package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/chronosync/chronosync/infile"
)

// Load reads the scenario file at path and parses it with [Parse], naming
// the file by path in errors. Relative paths in the file (a phasegap
// workload's costs) are taken relative to the file's directory.
func Load(path string) (*Scenario, error) {
	data, err := infile.ReadFile(path, infile.Scenario)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	return parse(path, data, filepath.Dir(path))
}

// LoadUntilStopped is Load for a run that may go on until it is stopped
// (a long-running real node: chronosync node, or run --backend=real): it
// takes duration: 0 as "until SIGINT or SIGTERM" (see
// [Scenario.UntilStopped]), which Load refuses. The simulator never runs
// such a scenario (harness.Run refuses it).
func LoadUntilStopped(path string) (*Scenario, error) {
	data, err := infile.ReadFile(path, infile.Scenario)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	return parseWith(path, data, filepath.Dir(path), true)
}

// UntilStopped reports whether s runs until it is stopped: duration 0, as
// LoadUntilStopped takes it.
func (s *Scenario) UntilStopped() bool { return s.Duration == 0 && s.untilStopped }

// Parse decodes a scenario file strictly and validates it. name is the
// file's name in errors. Every problem found is reported, as an
// [ErrorList] of [*Error] sorted by line: YAML syntax, unknown or repeated
// keys, values of the wrong type or form, then (only if decoding
// succeeded) the checks of [Scenario.Validate]. The data come from no file
// on disk: relative paths in it (a phasegap workload's costs) stay as
// written; [Load] resolves them against the file's directory.
func Parse(name string, data []byte) (*Scenario, error) {
	return parse(name, data, "")
}

// parse is Parse with the directory that relative paths in the file are
// joined to ("" for none).
func parse(name string, data []byte, dir string) (*Scenario, error) {
	return parseWith(name, data, dir, false)
}

// parseWith is parse, taking duration 0 where untilStopped.
func parseWith(name string, data []byte, dir string, untilStopped bool) (*Scenario, error) {
	root, err := parseDocument(name, data)
	if err != nil {
		return nil, err
	}
	d := &decoder{file: name, dir: dir}
	s := d.scenario(root)
	if err := d.list.err(); err != nil {
		return nil, err
	}
	s.src = &source{file: name, dir: dir, root: root}
	s.untilStopped = untilStopped
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// parseDocument parses data as exactly one YAML document holding a mapping.
func parseDocument(name string, data []byte) (*yaml.Node, error) {
	one := func(line int, format string, args ...any) error {
		return ErrorList{{File: name, Line: line, Msg: fmt.Sprintf(format, args...)}}
	}
	const want = "expected a mapping with at least the keys name, duration and nodes"
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
		return nil, one(1, "empty scenario file; %s", want)
	} else if err != nil {
		return nil, syntaxError(name, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		line := extra.Line
		if len(extra.Content) > 0 {
			line = extra.Content[0].Line
		}
		return nil, one(line, "a second YAML document; expected one scenario per file")
	} else if !errors.Is(err, io.EOF) {
		return nil, syntaxError(name, err)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return nil, one(1, "empty scenario file; %s", want)
		}
		root = deref(root.Content[0])
	}
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		return nil, one(root.Line, "empty scenario file; %s", want)
	}
	if root.Kind != yaml.MappingNode {
		return nil, one(root.Line, "the scenario is %s; %s", describe(root), want)
	}
	return root, nil
}

// syntaxError turns a YAML parser error ("yaml: line 3: did not find
// expected key") into an ErrorList with the line.
func syntaxError(name string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	e := &Error{File: name, Msg: "YAML syntax error: " + msg}
	if m := regexp.MustCompile(`^line (\d+): (.*)$`).FindStringSubmatch(msg); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		e.Msg = "YAML syntax error: " + m[2]
	}
	return ErrorList{e}
}

// decoder turns a YAML node tree into a Scenario, collecting errors.
type decoder struct {
	file      string
	dir       string // the directory relative paths are joined to, or ""
	list      ErrorList
	suggested []string // paths of keys suggested for misspelled ones
}

func (d *decoder) errorf(n *yaml.Node, path, format string, args ...any) {
	d.list = append(d.list, &Error{File: d.file, Line: n.Line, Path: path, Msg: fmt.Sprintf(format, args...)})
}

// describe says what a node is, for "expected X, got Y" messages.
func describe(n *yaml.Node) string {
	n = deref(n)
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return "nothing (null)"
		case "!!str":
			return fmt.Sprintf("string %q", n.Value)
		case "!!int":
			return "integer " + n.Value
		case "!!float":
			return "number " + n.Value
		case "!!bool":
			return "boolean " + n.Value
		}
		return fmt.Sprintf("%s %q", n.ShortTag(), n.Value)
	}
	return "an unexpected YAML node"
}

// context names a mapping in messages.
func context(path string) string {
	if path == "" {
		return "scenario"
	}
	return path
}

// fields checks that n is a mapping whose keys are all in allowed, none
// repeated, and returns the values by key. It returns nil if n is not a
// mapping.
func (d *decoder) fields(n *yaml.Node, path string, allowed ...string) map[string]*yaml.Node {
	return d.kindFields(n, path, "", nil, allowed)
}

// kindFields is fields for a mapping of the given kind, which decides the
// keys it may have. owner names the other kind that a key not allowed
// belongs to, or returns "" if it belongs to none; such a key is reported
// at its line as a key of that kind rather than as an unknown key. owner
// may be nil.
func (d *decoder) kindFields(n *yaml.Node, path, kind string, owner func(k string) string, allowed []string) map[string]*yaml.Node {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "expected a mapping with keys %s; got %s", strings.Join(allowed, ", "), describe(n))
		return nil
	}
	out := make(map[string]*yaml.Node, len(n.Content)/2)
	first := make(map[string]int, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.errorf(k, path, "a key is %s; expected a plain name", describe(k))
			continue
		}
		if line, dup := first[k.Value]; dup {
			d.errorf(k, key(path, k.Value), "duplicate key %q (first at line %d); expected each key once", k.Value, line)
			continue
		}
		first[k.Value] = k.Line
		if !slices.Contains(allowed, k.Value) {
			if owner != nil {
				if other := owner(k.Value); other != "" {
					d.errorf(k, key(path, k.Value), "%s applies only to kind %s, not %q; expected one of: %s",
						k.Value, other, kind, strings.Join(allowed, ", "))
					continue
				}
			}
			hint := ""
			if strings.HasSuffix(k.Value, ")") {
				hint = "it looks like the end of a random spec split at its comma: quote specs inside {...}; "
			} else if near := nearest(k.Value, allowed); near != "" {
				hint = fmt.Sprintf("did you mean %q? ", near)
				d.suggested = append(d.suggested, key(path, near))
			}
			d.errorf(k, "", "unknown key %q in %s; %sexpected one of: %s", k.Value, context(path), hint, strings.Join(allowed, ", "))
			continue
		}
		out[k.Value] = v
	}
	return out
}

// required reports a missing key of mapping n, unless an unknown key was
// taken for a misspelling of it.
func (d *decoder) required(m map[string]*yaml.Node, n *yaml.Node, path, k, want string) {
	if _, ok := m[k]; m != nil && !ok && !slices.Contains(d.suggested, key(path, k)) {
		d.errorf(deref(n), path, "missing key %q in %s; expected %s", k, context(path), want)
	}
}

// field decodes m[k] into *dst if the key is present.
func field[T any](m map[string]*yaml.Node, path, k string, dec func(*yaml.Node, string) (T, bool), dst *T) {
	if n, ok := m[k]; ok {
		if v, ok := dec(n, key(path, k)); ok {
			*dst = v
		}
	}
}

// optional decodes m[k] into a new *T if the key is present.
func optional[T any](m map[string]*yaml.Node, path, k string, dec func(*yaml.Node, string) (T, bool), dst **T) {
	if n, ok := m[k]; ok {
		if v, ok := dec(n, key(path, k)); ok {
			*dst = &v
		}
	}
}

// scalar checks that n is a non-null scalar with one of the given tags.
func (d *decoder) scalar(n *yaml.Node, path, want string, tags ...string) (*yaml.Node, bool) {
	n = deref(n)
	if n.Kind != yaml.ScalarNode || !slices.Contains(tags, n.ShortTag()) {
		d.errorf(n, path, "expected %s; got %s", want, describe(n))
		return nil, false
	}
	return n, true
}

func (d *decoder) str(n *yaml.Node, path string) (string, bool) {
	s, ok := d.scalar(n, path, "a string", "!!str", "!!int", "!!float", "!!bool")
	if !ok {
		return "", false
	}
	return s.Value, true
}

// boolean decodes true or false (YAML 1.2's booleans only: yes, on and
// the like are strings, and an error).
func (d *decoder) boolean(n *yaml.Node, path string) (bool, bool) {
	s, ok := d.scalar(n, path, "true or false", "!!bool")
	if !ok {
		return false, false
	}
	var v bool
	if err := s.Decode(&v); err != nil {
		d.errorf(s, path, "boolean %s: %v; expected true or false", s.Value, err)
		return false, false
	}
	return v, true
}

func (d *decoder) integer(n *yaml.Node, path string) (int, bool) {
	s, ok := d.scalar(n, path, "an integer", "!!int")
	if !ok {
		return 0, false
	}
	var v int
	if err := s.Decode(&v); err != nil {
		d.errorf(s, path, "integer %s out of range", s.Value)
		return 0, false
	}
	return v, true
}

func (d *decoder) number(n *yaml.Node, path string) (float64, bool) {
	s, ok := d.scalar(n, path, "a number", "!!int", "!!float")
	if !ok {
		return 0, false
	}
	return parsed(d, s, path, parseNumber)
}

func (d *decoder) uint64(n *yaml.Node, path string) (uint64, bool) {
	s, ok := d.scalar(n, path, "an integer >= 0", "!!int")
	if !ok {
		return 0, false
	}
	var v uint64
	if err := s.Decode(&v); err != nil {
		d.errorf(s, path, "%s is not an integer in [0, 2^64); expected an unsigned integer", s.Value)
		return 0, false
	}
	return v, true
}

// parsed runs parse on a scalar's text, reporting its error.
func parsed[T any](d *decoder, s *yaml.Node, path string, parse func(string) (T, error)) (T, bool) {
	v, err := parse(s.Value)
	if err != nil {
		d.errorf(s, path, "%v", err)
		return v, false
	}
	return v, true
}

func (d *decoder) duration(n *yaml.Node, path string) (time.Duration, bool) {
	s, ok := d.scalar(n, path, "a duration like 50us, 2ms or 1s", "!!str", "!!int", "!!float")
	if !ok {
		return 0, false
	}
	v, ok := parsed(d, s, path, parseDuration)
	return v, ok
}

func (d *decoder) percent(n *yaml.Node, path string) (Percent, bool) {
	s, ok := d.scalar(n, path, "a percentage like 25%", "!!str", "!!int", "!!float")
	if !ok {
		return 0, false
	}
	bare := s.ShortTag() != "!!str"
	return parsed(d, s, path, func(v string) (Percent, error) { return parsePercent(v, bare) })
}

func (d *decoder) rate(n *yaml.Node, path string) (uint64, bool) {
	s, ok := d.scalar(n, path, "a rate like 1gbit", "!!str", "!!int", "!!float")
	if !ok {
		return 0, false
	}
	if s.ShortTag() != "!!str" {
		d.errorf(s, path, "rate %s has no unit; %s", s.Value, rateHelp)
		return 0, false
	}
	return parsed(d, s, path, parseRate)
}

// durSpec decodes a duration or a random spec with duration arguments.
func (d *decoder) durSpec(n *yaml.Node, path string) (Spec[time.Duration], bool) {
	s, ok := d.scalar(n, path, "a duration, uniform(a, b) or normal(mean, sd)", "!!str", "!!int", "!!float")
	if !ok {
		return Spec[time.Duration]{}, false
	}
	if isSpecCall(s.Value) {
		return parsed(d, s, path, func(v string) (Spec[time.Duration], error) {
			return parseSpec(v, "duration", parseDuration)
		})
	}
	v, ok := parsed(d, s, path, parseDuration)
	return Spec[time.Duration]{A: v}, ok
}

// numSpec decodes a number or a random spec with number arguments.
func (d *decoder) numSpec(n *yaml.Node, path string) (Spec[float64], bool) {
	const want = "a number, uniform(a, b) or normal(mean, sd)"
	s, ok := d.scalar(n, path, want, "!!str", "!!int", "!!float")
	if !ok {
		return Spec[float64]{}, false
	}
	if s.ShortTag() != "!!str" {
		v, ok := parsed(d, s, path, parseNumber)
		return Spec[float64]{A: v}, ok
	}
	if !isSpecCall(s.Value) {
		d.errorf(s, path, "expected %s; got %s", want, describe(s))
		return Spec[float64]{}, false
	}
	return parsed(d, s, path, func(v string) (Spec[float64], error) {
		return parseSpec(v, "number", parseNumber)
	})
}

// list checks that n is a sequence and returns its items.
func (d *decoder) seq(n *yaml.Node, path, want string) ([]*yaml.Node, bool) {
	n = deref(n)
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, path, "expected a list of %s; got %s", want, describe(n))
		return nil, false
	}
	return n.Content, true
}

func (d *decoder) ints(n *yaml.Node, path string) ([]int, bool) {
	items, ok := d.seq(n, path, "node numbers")
	if !ok {
		return nil, false
	}
	out := make([]int, 0, len(items))
	for i, it := range items {
		v, ok := d.integer(it, index(path, i))
		if !ok {
			return nil, false
		}
		out = append(out, v)
	}
	return out, true
}

// nearest returns the allowed key closest to k if it is a likely
// misspelling (edit distance at most 2, less than half of k), else "".
func nearest(k string, allowed []string) string {
	best, bestDist := "", 3
	for _, a := range allowed {
		if d := EditDistance(k, a); d < bestDist && 2*d < len(k) {
			best, bestDist = a, d
		}
	}
	return best
}

// EditDistance is the Levenshtein distance between a and b, in bytes: what
// makes a misspelt key or scenario name a near match.
func EditDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
