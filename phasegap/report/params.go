package report

import (
	"slices"

	"github.com/chronosync/chronosync/phasegap/params"
)

// resultFields returns the fields a run's results carry (those a sweep
// varies, params.Field.Sweep), in the table's order, split in two: those
// keys names, in the table's order, and the others. The outputs place
// the first among their own columns and the others, the parameters they
// do not name, together: a parameter added to the table joins them.
func resultFields(keys ...string) (named, others []params.Field) {
	for _, f := range params.Fields() {
		switch {
		case !f.Sweep:
		case slices.Contains(keys, f.Key):
			named = append(named, f)
		default:
			others = append(others, f)
		}
	}
	return named, others
}

// paramColumns returns the CSV columns of fs, in their order.
func paramColumns(fs []params.Field) []column {
	out := make([]column, len(fs))
	for i, f := range fs {
		out[i] = column{f.Col(), func(r *Row) cell {
			p := &r.Config.Params
			if f.Int != nil {
				return integer(int64(*f.Int(p)))
			}
			return str(*f.Str(p))
		}}
	}
	return out
}

// splitAfter splits fs after the field of key (all of fs when none is).
func splitAfter(fs []params.Field, key string) (head, tail []params.Field) {
	i := slices.IndexFunc(fs, func(f params.Field) bool { return f.Key == key })
	if i < 0 {
		return fs, nil
	}
	return fs[:i+1], fs[i+1:]
}
