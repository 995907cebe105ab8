package sweep

import (
	"errors"
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/chronosync/chronosync/phasegap/params"
)

// Base are the phasegap parameters a sweep file's base writes: the keys
// of package params's table marked Sweep (a scenario's phasegap keys, and
// ranks). A key not written, or written as zero or "", keeps phasegap's
// default.
type Base struct {
	set params.Params // the values written; zero elsewhere
}

// UnmarshalYAML decodes the base's mapping, key by key through the
// table. An unknown key, or a value of the wrong type, is an error at its
// line.
func (b *Base) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: base: expected a mapping of phasegap parameters", n.Line)}}
	}
	var msgs []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		f, ok := params.FieldByKey(k.Value)
		var err error
		switch {
		case !ok || !f.Sweep:
			msgs = append(msgs, fmt.Sprintf("line %d: field %s not found in type sweep.Base", k.Line, k.Value))
		case f.Int != nil:
			err = v.Decode(f.Int(&b.set))
		case f.Str != nil:
			err = v.Decode(f.Str(&b.set))
		}
		var te *yaml.TypeError
		switch {
		case errors.As(err, &te):
			msgs = append(msgs, te.Errors...)
		case err != nil:
			msgs = append(msgs, fmt.Sprintf("line %d: %s: %v", v.Line, k.Value, err))
		}
	}
	if len(msgs) > 0 {
		return &yaml.TypeError{Errors: msgs}
	}
	return nil
}

// over writes the values b sets (not zero, not "") over p.
func (b *Base) over(p *params.Params) {
	for _, f := range params.Fields() {
		switch {
		case !f.Sweep:
		case f.Int != nil && *f.Int(&b.set) != 0:
			*f.Int(p) = *f.Int(&b.set)
		case f.Str != nil && *f.Str(&b.set) != "":
			*f.Str(p) = *f.Str(&b.set)
		}
	}
}
