package scenario

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Error is one problem in a scenario. Its message has the form
// "FILE:LINE: PATH: what is wrong; what was expected", where FILE and LINE
// are left out for a scenario built in code and PATH for a problem that is
// about no single value.
type Error struct {
	File string // the name given to Parse, or ""
	Line int    // 1-based; 0 if unknown
	Path string // the key path, such as "links.overrides[2].from", or ""
	Msg  string
}

// Error formats the error as FILE:LINE: PATH: MSG.
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			b.WriteString(":" + strconv.Itoa(e.Line))
		}
		b.WriteString(": ")
	}
	if e.Path != "" {
		b.WriteString(e.Path + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ErrorList is every problem found in a scenario, sorted by line.
type ErrorList []*Error

// maxListed is how many errors ErrorList.Error spells out.
const maxListed = 20

// Error lists the errors one per line.
func (l ErrorList) Error() string {
	var b strings.Builder
	for i, e := range l {
		if i == maxListed {
			fmt.Fprintf(&b, "\n(and %d more errors)", len(l)-i)
			break
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Unwrap returns the errors, for errors.As and errors.Is.
func (l ErrorList) Unwrap() []error {
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errs
}

// err returns l as an error, or nil if it is empty.
func (l ErrorList) err() error {
	if len(l) == 0 {
		return nil
	}
	slices.SortStableFunc(l, func(a, b *Error) int { return cmp.Compare(a.Line, b.Line) })
	return l
}

// source is the file a scenario was parsed from.
type source struct {
	file string
	dir  string     // the directory relative paths were joined to ("" if none)
	root *yaml.Node // the top-level mapping
}

// locate fills in File and Line of errors that carry only a path.
func (src *source) locate(errs ErrorList) {
	if src == nil {
		return
	}
	for _, e := range errs {
		e.File = src.file
		if e.Line == 0 {
			e.Line = src.line(e.Path)
		}
	}
}

// line returns the line of the value at path ("a.b[2].c"): the line of its
// key in a mapping, of its item in a sequence. Where the path leaves the
// document (a key that is not written), it returns the line of the last
// node on the path that exists.
func (src *source) line(path string) int {
	n := src.root
	line := n.Line
	for _, seg := range splitPath(path) {
		n = deref(n)
		var next *yaml.Node
		switch {
		case seg.key != "" && n.Kind == yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == seg.key {
					line, next = n.Content[i].Line, n.Content[i+1]
				}
			}
		case seg.key == "" && n.Kind == yaml.SequenceNode && seg.index < len(n.Content):
			next = n.Content[seg.index]
			line = next.Line
		}
		if next == nil {
			break
		}
		n = next
	}
	return line
}

type pathSeg struct {
	key   string // "" for an index
	index int
}

// splitPath splits "a.b[2][0].c" into a, b, [2], [0], c.
func splitPath(path string) []pathSeg {
	var segs []pathSeg
	for part := range strings.SplitSeq(path, ".") {
		key, rest, _ := strings.Cut(part, "[")
		if key != "" {
			segs = append(segs, pathSeg{key: key})
		}
		for rest != "" {
			num, after, _ := strings.Cut(rest, "]")
			i, err := strconv.Atoi(num)
			if err != nil {
				break
			}
			segs = append(segs, pathSeg{index: i})
			rest = strings.TrimPrefix(after, "[")
		}
	}
	return segs
}

// deref follows an alias to the node it names.
func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// key appends a mapping key to a path.
func key(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// index appends a sequence index to a path.
func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }
