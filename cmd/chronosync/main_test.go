package main

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/chronosync/chronosync/real/shaper"
)

func TestMain(m *testing.M) {
	shaper.MaybeChild()
	testscript.Main(m, map[string]func(){
		"chronosync": func() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs the CLI end-to-end tests in testdata/script.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{Dir: "testdata/script", Cmds: scriptCmds()})
}
