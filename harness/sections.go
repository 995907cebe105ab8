package harness

import (
	"fmt"
	"reflect"

	"github.com/chronosync/chronosync/harness/engine"
)

// Put stores section, an adapter's summary section, in the field of s of
// its type (engine.Sections). A section of a type s has no field of is a
// programming error (the adapter's section is missing from summary.json's
// schema) and panics.
func (s *Summary) Put(section any) {
	v := reflect.ValueOf(section)
	sv := reflect.ValueOf(s).Elem()
	for i := range sv.NumField() {
		if f := sv.Field(i); f.Type() == v.Type() && f.Kind() == reflect.Pointer {
			f.Set(v)
			return
		}
	}
	panic(fmt.Sprintf("harness: summary has no %T section", section))
}

// judgeSections adds the conditions of every section of s that measures
// its own (engine.Judge), in s's field order.
func judgeSections(cs *conditions, s *Summary) {
	sv := reflect.ValueOf(s).Elem()
	for i := range sv.NumField() {
		f := sv.Field(i)
		if f.Kind() != reflect.Pointer || f.IsNil() {
			continue
		}
		if j, ok := f.Interface().(engine.Judge); ok {
			j.Judge(cs)
		}
	}
}

// Check adds a condition (engine.Checker): an adapter's section judges
// itself through it.
func (cs *conditions) Check(name string, value, bound float64, unit, why string) {
	cs.check(name, value, bound, unit, why)
}
