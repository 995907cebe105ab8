// Package scenarios is the library of scenario files that users start
// from, embedded in the binary. The schema is documented in README.md
// next to the files and implemented by package scenario.
package scenarios

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/chronosync/chronosync/scenario"
)

//go:embed *.yaml
var files embed.FS

// FS returns the scenario files, named "<name>.yaml" at its root.
func FS() fs.FS { return files }

// Names returns the names of the scenarios in the library, sorted.
func Names() []string {
	entries, _ := files.ReadDir(".") // an embed.FS root always reads
	var names []string
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".yaml"); ok {
			names = append(names, name)
		}
	}
	return names
}

// Load parses the library scenario called name ("quickstart"), naming it
// "scenarios/<name>.yaml" in errors.
func Load(name string) (*scenario.Scenario, error) {
	file := name + ".yaml"
	data, err := fs.ReadFile(files, file)
	if err != nil {
		return nil, fmt.Errorf("scenarios: no scenario %q in the library (have %s): %w", name, strings.Join(Names(), ", "), err)
	}
	return scenario.Parse(path.Join("scenarios", file), data)
}
