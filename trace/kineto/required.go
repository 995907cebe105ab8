package kineto

import (
	"errors"
	"fmt"
	"strings"
)

// What an event must have (issue 30): a phase, and the members its phase
// means nothing without, as the Chrome trace-event format defines them and
// Kineto writes them. Every event has "ph"; every event but a metadata one
// ("M") has "ts"; a complete event ("X") has "name" and "dur" too; a
// duration begin ("B"), an instant ("i", "I"), a counter ("C") and a
// metadata event are named by "name". A null member is absent. Other
// members are optional, and a phase this package does not know needs
// only "ph" and "ts".

// present is which of the members a phase may require an event has.
type present struct{ ph, name, ts, dur bool }

// needs is the members an event of phase ph must have besides "ph".
func needs(ph string) (name, ts, dur bool) {
	switch ph {
	case "X":
		return true, true, true
	case "B", "i", "I", "C":
		return true, true, false
	case "M":
		return true, false, false
	}
	return false, true, false
}

// check says what ev, whose members are p, lacks, or nil.
func (p present) check(ev *Event) error {
	if !p.ph {
		return errors.New(`want an event with "ph" (its phase, e.g. "X"), got none`)
	}
	if ev.Ph == "" {
		return errors.New(`want an event with a phase in "ph" (e.g. "X"), got ""`)
	}
	name, ts, dur := needs(ev.Ph)
	var missing []string
	for _, m := range [...]struct {
		need, has bool
		key       string
	}{{name, p.name, "name"}, {ts, p.ts, "ts"}, {dur, p.dur, "dur"}} {
		if m.need && !m.has {
			missing = append(missing, `"`+m.key+`"`)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("want %s (an event of phase %q has %s), got none", strings.Join(missing, " and "), ev.Ph, needsText(ev.Ph))
}

// needsText lists the members an event of phase ph has, for messages:
// "ph, name, ts and dur".
func needsText(ph string) string {
	name, ts, dur := needs(ph)
	keys := []string{"ph"}
	for _, m := range [...]struct {
		need bool
		key  string
	}{{name, "name"}, {ts, "ts"}, {dur, "dur"}} {
		if m.need {
			keys = append(keys, m.key)
		}
	}
	if len(keys) == 1 {
		return keys[0]
	}
	return strings.Join(keys[:len(keys)-1], ", ") + " and " + keys[len(keys)-1]
}
