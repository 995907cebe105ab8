package halo

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"

	"github.com/google/renameio/v2"
	"go.yaml.in/yaml/v3"

	"github.com/chronosync/chronosync/infile"
)

// MaxCostsFileBytes is the largest costs file LoadCosts reads: a costs
// file is eight keys and a note.
const MaxCostsFileBytes = 64 << 10

// costField is one key of a costs file: a float cost, or the eager
// limit (an integer).
type costField struct {
	name string
	f    *float64
	i    *int
}

// costFields are c's keys, in Costs' order (their yaml tags).
func costFields(c *Costs) []costField {
	return []costField{
		{name: "point_ns", f: &c.PointNS},
		{name: "flop_ns", f: &c.FlopNS},
		{name: "byte_ns", f: &c.ByteNS},
		{name: "fork_ns", f: &c.ForkNS},
		{name: "mem_bytes_per_ns", f: &c.MemBytesPerNS},
		{name: "point_bytes", f: &c.PointBytes},
		{name: "call_ns", f: &c.CallNS},
		{name: "eager_limit", i: &c.EagerLimit},
		{name: "imbalance_ns", f: &c.ImbalanceNS},
		{name: "imbalance_frac", f: &c.ImbalanceFrac},
	}
}

// costNames are the keys of a costs file, in order.
func costNames() []string {
	var c Costs
	var out []string
	for _, f := range costFields(&c) {
		out = append(out, f.name)
	}
	return out
}

// LoadCosts reads the costs file at path, as WriteCosts writes it: a YAML
// mapping with every key of Costs (point_ns, flop_ns, byte_ns, fork_ns,
// mem_bytes_per_ns, point_bytes, call_ns, eager_limit, imbalance_ns,
// imbalance_frac), each once, each a
// number (eager_limit an integer), and nothing else; comments are free.
// Every key is required: a file that left one out would silently take a
// value nobody calibrated. The costs must pass Costs.Validate. Errors name
// the file, the line and the key.
func LoadCosts(path string) (Costs, error) {
	f, err := infile.Open(path, infile.Costs)
	if err != nil {
		return Costs{}, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxCostsFileBytes+1))
	if err != nil {
		return Costs{}, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > MaxCostsFileBytes {
		return Costs{}, fmt.Errorf("%s: larger than %d bytes (halo.MaxCostsFileBytes): expected a costs file (eight keys and comments)", path, MaxCostsFileBytes)
	}
	return decodeCosts(data, path)
}

// ParseCosts decodes a costs file's contents, already read, as LoadCosts
// decodes the file; file names it in errors. A caller that keeps the
// bytes (a run directory's copy) decodes the very bytes it keeps.
func ParseCosts(data []byte, file string) (Costs, error) {
	if len(data) > MaxCostsFileBytes {
		return Costs{}, fmt.Errorf("%s: larger than %d bytes (halo.MaxCostsFileBytes): expected a costs file (eight keys and comments)", file, MaxCostsFileBytes)
	}
	return decodeCosts(data, file)
}

// decodeCosts decodes a costs file's contents; file names it in errors.
func decodeCosts(data []byte, file string) (Costs, error) {
	at := func(line int, format string, a ...any) error {
		return fmt.Errorf("%s:%d: %s", file, line, fmt.Sprintf(format, a...))
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
		return Costs{}, fmt.Errorf("%s: empty: expected the costs, one key a line (%s)", file, strings.Join(costNames(), ", "))
	} else if err != nil {
		return Costs{}, yamlError(file, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return Costs{}, at(extra.Line, "a second YAML document: expected one mapping of costs")
	} else if !errors.Is(err, io.EOF) {
		return Costs{}, yamlError(file, err)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return Costs{}, at(root.Line, "expected a mapping of costs (point_ns: 1.1, ...), found %s", nodeKind(root))
	}
	var c Costs
	fields := costFields(&c)
	seen := map[string]int{}
	var errs []error
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			errs = append(errs, at(k.Line, "a key that is %s: expected one of %s", nodeKind(k), strings.Join(costNames(), ", ")))
			continue
		}
		var fd *costField
		for j := range fields {
			if fields[j].name == k.Value {
				fd = &fields[j]
			}
		}
		if fd == nil {
			errs = append(errs, at(k.Line, "unknown key %q: expected one of %s", k.Value, strings.Join(costNames(), ", ")))
			continue
		}
		if first, ok := seen[fd.name]; ok {
			errs = append(errs, at(k.Line, "%s: repeated (first on line %d)", fd.name, first))
			continue
		}
		seen[fd.name] = k.Line
		if err := decodeCost(fd, v); err != nil {
			errs = append(errs, at(v.Line, "%s: %v", fd.name, err))
		}
	}
	var missing []string
	for _, fd := range fields {
		if _, ok := seen[fd.name]; !ok {
			missing = append(missing, fd.name)
		}
	}
	if len(missing) > 0 {
		errs = append(errs, at(root.Line, "missing %s: every key is required (%s)", strings.Join(missing, ", "), strings.Join(costNames(), ", ")))
	}
	if len(errs) > 0 {
		return Costs{}, errors.Join(errs...)
	}
	if err := c.Validate(); err != nil {
		return Costs{}, fmt.Errorf("%s: %w", file, err)
	}
	return c, nil
}

// decodeCost sets fd from v: a number (an integer for eager_limit) that
// Costs.Validate accepts.
func decodeCost(fd *costField, v *yaml.Node) error {
	shown := v.Value
	if v.Kind != yaml.ScalarNode {
		shown = nodeKind(v)
	}
	if fd.i != nil {
		if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!int" {
			return fmt.Errorf("%q: expected an integer (bytes)", shown)
		}
		var n int
		if err := v.Decode(&n); err != nil {
			return fmt.Errorf("%q: expected an integer (bytes) that fits an int", shown)
		}
		*fd.i = n
	} else {
		if v.Kind != yaml.ScalarNode || (v.ShortTag() != "!!int" && v.ShortTag() != "!!float") {
			return fmt.Errorf("%q: expected a number", shown)
		}
		var f float64
		if err := v.Decode(&f); err != nil {
			return fmt.Errorf("%q: expected a number", shown)
		}
		*fd.f = f
	}
	// Validate the value alone: DefaultCosts with it in place.
	probe := DefaultCosts()
	for _, p := range costFields(&probe) {
		if p.name != fd.name {
			continue
		}
		if p.i != nil {
			*p.i = *fd.i
		} else {
			*p.f = *fd.f
		}
	}
	if err := probe.Validate(); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "costs: "+fd.name+" "))
	}
	return nil
}

// nodeKind names a YAML node's kind for errors.
func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.ScalarNode:
		return fmt.Sprintf("the scalar %q", n.Value)
	}
	return "nothing"
}

// yamlError turns yaml's "yaml: line N: msg" into "file:N: msg".
func yamlError(file string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if n, after, ok := strings.Cut(rest, ": "); ok {
			if _, err := strconv.Atoi(n); err == nil {
				return fmt.Errorf("%s:%s: %s: expected a YAML mapping of costs", file, n, after)
			}
		}
	}
	return fmt.Errorf("%s: %s: expected a YAML mapping of costs", file, msg)
}

// WriteCosts writes c to path as LoadCosts reads it, atomically (a
// temporary file renamed into place, mode 0644). note goes first, as
// "# " comment lines: what the costs were calibrated from, when, and how
// well they fit. A character YAML would not keep in a comment (a line
// break of another kind, a control character) becomes "?".
func WriteCosts(path string, c Costs, note string) error {
	if err := c.Validate(); err != nil {
		return fmt.Errorf("%s: not written: %w", path, err)
	}
	var b bytes.Buffer
	if note = strings.TrimRight(commentSafe(note), "\n"); note != "" {
		for line := range strings.SplitSeq(note, "\n") {
			b.WriteString(strings.TrimRight("# "+line, " \t") + "\n")
		}
	}
	body, err := yaml.Marshal(c)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	b.Write(body)
	if got, err := decodeCosts(b.Bytes(), path); err != nil || got != c {
		// Not expected: every valid Costs round-trips.
		return fmt.Errorf("%s: not written: the file would not read back as the costs given (%v)", path, err)
	}
	if b.Len() > MaxCostsFileBytes {
		return fmt.Errorf("%s: not written: %d bytes with the note, more than LoadCosts reads (%d, halo.MaxCostsFileBytes)", path, b.Len(), MaxCostsFileBytes)
	}
	return renameio.WriteFile(path, b.Bytes(), 0o644, renameio.WithTempDir(filepath.Dir(path)))
}

// commentSafe keeps note's text for YAML comments: "\r\n", "\r" and
// YAML's other line breaks become "\n"; invalid UTF-8 and the characters
// YAML refuses in a stream (controls other than tab, surrogates, U+FEFF,
// U+FFFE and U+FFFF) become "?".
func commentSafe(note string) string {
	note = strings.ReplaceAll(note, "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\r' || r == '\u0085' || r == '\u2028' || r == '\u2029':
			return '\n'
		case r == '\n' || r == '\t' || r >= 0x20 && r <= 0x7e,
			r >= 0xa0 && r <= 0xd7ff, r >= 0xe000 && r <= 0xfffd && r != 0xfeff, r >= 0x10000 && r <= unicode.MaxRune:
			return r
		}
		return '?'
	}, strings.ToValidUTF8(note, "?"))
}
