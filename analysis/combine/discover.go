package combine

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
)

var nodeFile = regexp.MustCompile(`^node(\d+)\.xplane\.pb$`)

// Discover finds a run directory's inputs: node<i>.xplane.pb with, when
// present, node<i>.snapshots.pb beside it, and offsets.jsonl ("" when
// absent). It fails when the directory holds no node trace.
func Discover(dir string) (inputs []Input, offsetsPath string, err error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, "", fmt.Errorf("discover: %w", err)
	}
	for _, e := range ents {
		m := nodeFile.FindStringSubmatch(e.Name())
		if m == nil || e.IsDir() {
			continue
		}
		n, err := strconv.Atoi(m[1])
		if err != nil {
			return nil, "", fmt.Errorf("discover: %s: node id: %w", e.Name(), err)
		}
		in := Input{Node: n, Trace: filepath.Join(dir, e.Name())}
		snap := filepath.Join(dir, fmt.Sprintf("node%d.snapshots.pb", n))
		if _, err := os.Stat(snap); err == nil {
			in.Snapshots = snap
		}
		inputs = append(inputs, in)
	}
	if len(inputs) == 0 {
		return nil, "", fmt.Errorf("discover: %s holds no node<i>.xplane.pb", dir)
	}
	slices.SortFunc(inputs, func(a, b Input) int { return a.Node - b.Node })
	if p := filepath.Join(dir, "offsets.jsonl"); fileExists(p) {
		offsetsPath = p
	}
	return inputs, offsetsPath, nil
}

// NodeOf returns the node id in a node<i>.xplane.pb file name, or a
// Kineto trace's node<i>.json, node<i>.json.gz, node<i>.pt.trace.json or
// node<i>.pt.trace.json.gz.
func NodeOf(path string) (int, bool) {
	m := nodeName.FindStringSubmatch(filepath.Base(path))
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	return n, err == nil
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}
