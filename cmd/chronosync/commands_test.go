package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/scenario"
	"github.com/chronosync/chronosync/scenarios"
)

// TestNearNames pins the near matches an unknown scenario name is answered
// with, against the real library.
func TestNearNames(t *testing.T) {
	lib := scenarios.Names()
	tests := []struct {
		arg  string
		want []string
	}{
		{"mesh8-jiter", []string{"mesh8-jitter"}},              // one letter missing
		{"Mesh8-Jitter", []string{"mesh8-jitter"}},             // case
		{"quikstart", []string{"quickstart"}},                  // typo
		{"train", []string{"train4", "train4-kineto"}},         // a prefix
		{"mesh8", []string{"mesh8-jitter", "mesh8-consensus"}}, // substring, nearest first
		{"ring32", []string{"ring32-faults"}},
		{"zz", nil},
		{"nothing-like-it", nil},
	}
	for _, tc := range tests {
		if got := nearNames(tc.arg, lib); !slices.Equal(got, tc.want) {
			t.Errorf("nearNames(%q) = %q; want %q", tc.arg, got, tc.want)
		}
	}
}

// TestEditDistance checks the Levenshtein distance on the usual cases.
func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"", "abc", 3}, {"abc", "abc", 0},
		{"kitten", "sitting", 3}, {"mesh8-jiter", "mesh8-jitter", 1}, {"ab", "ba", 2},
	}
	for _, tc := range tests {
		if got := scenario.EditDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("EditDistance(%q, %q) = %d; want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestOrList checks how near matches are listed in the message.
func TestOrList(t *testing.T) {
	tests := []struct {
		names []string
		want  string
	}{
		{[]string{"a"}, "a"},
		{[]string{"a", "b"}, "a or b"},
		{[]string{"a", "b", "c"}, "a, b or c"},
	}
	for _, tc := range tests {
		if got := orList(tc.names); got != tc.want {
			t.Errorf("orList(%q) = %q; want %q", tc.names, got, tc.want)
		}
	}
}

// TestLoadScenarioUnknown checks the message for a name that is neither a
// file nor in the library.
func TestLoadScenarioUnknown(t *testing.T) {
	t.Chdir(t.TempDir())
	tests := []struct {
		arg, want string
	}{
		{"mesh8-jiter", `no scenario "mesh8-jiter": no such file; did you mean mesh8-jitter? (chronosync scenario list)`},
		{"dir/quikstart.yaml", `no scenario "dir/quikstart.yaml": no such file; did you mean quickstart? (chronosync scenario list)`},
		{"xyz", `no scenario "xyz": no such file, and no library scenario of that name (chronosync scenario list)`},
	}
	for _, tc := range tests {
		_, _, err := loadScenario(tc.arg)
		if err == nil || err.Error() != tc.want {
			t.Errorf("loadScenario(%q) error = %v; want %q", tc.arg, err, tc.want)
		}
	}
	sc, path, err := loadScenario("mesh8-jitter")
	if err != nil || sc.Name != "mesh8-jitter" || !strings.HasSuffix(path, "scenarios/mesh8-jitter.yaml") {
		t.Errorf("loadScenario(mesh8-jitter) = %v, %q, %v; want the library's mesh8-jitter", sc, path, err)
	}
}
