package scenarios

import (
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"
)

// TestLibrary parses and resolves every file in the library.
func TestLibrary(t *testing.T) {
	files, err := fs.Glob(FS(), "*.yaml")
	if err != nil || len(files) < 5 {
		t.Fatalf("library files %v, %v; want at least 5", files, err)
	}
	for _, file := range files {
		t.Run(file, func(t *testing.T) {
			name := strings.TrimSuffix(file, ".yaml")
			s, err := Load(name)
			if err != nil {
				t.Fatal(err)
			}
			if s.Name != name {
				t.Errorf("name %q in %s; want the file's name %q", s.Name, file, name)
			}
			if s.Description == "" {
				t.Errorf("%s has no description", file)
			}
			r, err := s.Resolve(s.Seed)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Nodes) != s.Nodes || len(r.Edges) == 0 {
				t.Errorf("resolved %d nodes, %d edges", len(r.Nodes), len(r.Edges))
			}
		})
	}
}

// TestLibraryContents pins what other packages and docs rely on.
func TestLibraryContents(t *testing.T) {
	tests := []struct {
		name     string
		nodes    int
		edges    int
		duration time.Duration
		interval time.Duration
		faults   int
	}{
		{"quickstart", 4, 12, 10 * time.Second, 100 * time.Millisecond, 0},
		{"mesh8-jitter", 8, 56, 30 * time.Second, 100 * time.Millisecond, 0},
		{"ring32-faults", 32, 64, 60 * time.Second, 100 * time.Millisecond, 5},
		{"asym-queueing", 4, 12, 30 * time.Second, 100 * time.Millisecond, 0},
		{"bench1000", 1000, 4000, 60 * time.Second, time.Second, 0},
	}
	for _, tt := range tests {
		s, err := Load(tt.name)
		if err != nil {
			t.Fatal(err)
		}
		r, err := s.Resolve(s.Seed)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Nodes) != tt.nodes || len(r.Edges) != tt.edges || r.Duration != tt.duration ||
			r.Protocol.Interval != tt.interval || len(r.Faults) != tt.faults || r.Seed != 1 {
			t.Errorf("%s: %d nodes, %d edges, %v, ping every %v, %d faults, seed %d; want %+v",
				tt.name, len(r.Nodes), len(r.Edges), r.Duration, r.Protocol.Interval, len(r.Faults), r.Seed, tt)
		}
	}

	// asym-queueing: cross traffic on 0->1 but not on 1->0.
	s, _ := Load("asym-queueing")
	r, _ := s.Resolve(1)
	var fwd, rev bool
	for _, e := range r.Edges {
		switch {
		case e.From == 0 && e.To == 1:
			fwd = e.Link.Cross.Load == 0.7 && e.Link.Rate.BitsPerSecond == 1e9
		case e.From == 1 && e.To == 0:
			rev = e.Link.Cross.Kind == ""
		}
	}
	if !fwd || !rev {
		t.Errorf("asym-queueing: cross traffic on 0->1 %v, none on 1->0 %v; want both true", fwd, rev)
	}
}

func TestLoadUnknown(t *testing.T) {
	_, err := Load("nope")
	if err == nil || !strings.Contains(err.Error(), "quickstart") {
		t.Fatalf("Load(nope) = %v; want an error listing the library", err)
	}
}

func TestNames(t *testing.T) {
	names := Names()
	if len(names) < 5 || names[0] != "asym-queueing" {
		t.Fatalf("Names() = %v", names)
	}
}

func ExampleLoad() {
	s, err := Load("quickstart")
	if err != nil {
		panic(err)
	}
	r, err := s.Resolve(s.Seed)
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Name, len(r.Nodes), "nodes", len(r.Edges), "directed edges")
	// Output: quickstart 4 nodes 12 directed edges
}
