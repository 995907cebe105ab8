package halo

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCostsRoundTrip: what WriteCosts writes, LoadCosts reads back
// exactly, with the note as leading comments.
func TestCostsRoundTrip(t *testing.T) {
	odd := Costs{PointNS: 1.0 / 3, FlopNS: 5e-324, ByteNS: 0, ForkNS: 1e12, MemBytesPerNS: 0.1, PointBytes: 16, CallNS: 123456.789, EagerLimit: math.MaxInt}
	for _, tc := range []struct {
		name     string
		c        Costs
		note     string
		wantHead string
	}{
		{"defaults, no note", DefaultCosts(), "", "point_ns: 1.1\n"},
		{"odd values", odd, "one line", "# one line\npoint_ns: "},
		{"note lines", DefaultCosts(), "calibrated from a/results.csv\n\n  indented  \n", "# calibrated from a/results.csv\n#\n#   indented\npoint_ns:"},
		{"hostile note", DefaultCosts(), "a\rpoint_ns: -1\r\nb\u2028c: 1\x00\xff\ufeff", "# a\n# point_ns: -1\n# b\n# c: 1???\npoint_ns: 1.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "costs.yaml")
			if err := WriteCosts(path, tc.c, tc.note); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(data), tc.wantHead) {
				t.Errorf("file starts %q, want %q", data, tc.wantHead)
			}
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Perm() != 0o644 {
				t.Errorf("mode %v, want 0644", st.Mode().Perm())
			}
			got, err := LoadCosts(path)
			if err != nil {
				t.Fatalf("%v\n%s", err, data)
			}
			if got != tc.c {
				t.Errorf("read back %+v, want %+v", got, tc.c)
			}
		})
	}
}

// TestLoadCostsRefuses: every refusal names the file, the line, the key
// and what was expected.
func TestLoadCostsRefuses(t *testing.T) {
	good := "point_ns: 1.1\nflop_ns: 0.9\nbyte_ns: 0.1\nfork_ns: 600\nmem_bytes_per_ns: 10\npoint_bytes: 16\ncall_ns: 300\neager_limit: 4096\nimbalance_ns: 0\nimbalance_frac: 0\n"
	with := func(key, value string) string {
		var out []string
		for line := range strings.SplitSeq(strings.TrimSuffix(good, "\n"), "\n") {
			if strings.HasPrefix(line, key+":") {
				line = key + ": " + value
			}
			out = append(out, line)
		}
		return strings.Join(out, "\n") + "\n"
	}
	without := func(key string) string {
		var out []string
		for line := range strings.SplitSeq(strings.TrimSuffix(good, "\n"), "\n") {
			if !strings.HasPrefix(line, key+":") {
				out = append(out, line)
			}
		}
		return strings.Join(out, "\n") + "\n"
	}
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "costs.yaml: empty: expected the costs, one key a line (point_ns, flop_ns,"},
		{"comments only", "# nothing\n", "costs.yaml: empty: expected the costs"},
		{"a list", "- 1\n- 2\n", "costs.yaml:1: expected a mapping of costs (point_ns: 1.1, ...), found a list"},
		{"a scalar", "fast\n", `costs.yaml:1: expected a mapping of costs (point_ns: 1.1, ...), found the scalar "fast"`},
		{"syntax", "point_ns: [1\n", "costs.yaml:"},
		{"tab indent", "point_ns:\n\t1\n", "costs.yaml:2: found character that cannot start any token: expected a YAML mapping of costs"},
		{"two documents", good + "---\npoint_ns: 1\n", "costs.yaml:11: a second YAML document: expected one mapping of costs"},
		{"not a number", with("point_ns", "fast"), `costs.yaml:1: point_ns: "fast": expected a number`},
		{"a bool", with("flop_ns", "true"), `costs.yaml:2: flop_ns: "true": expected a number`},
		{"null", with("byte_ns", ""), `costs.yaml:3: byte_ns: "": expected a number`},
		{"quoted", with("fork_ns", `"600"`), `costs.yaml:4: fork_ns: "600": expected a number`},
		{"a list value", with("call_ns", "[1, 2]"), `costs.yaml:7: call_ns: "a list": expected a number`},
		{"a mapping value", with("call_ns", "{a: 1}"), `costs.yaml:7: call_ns: "a mapping": expected a number`},
		{"negative", with("fork_ns", "-1"), "costs.yaml:4: fork_ns: -1: expected a finite number from 0 to 1e12"},
		{"too big", with("mem_bytes_per_ns", "1e13"), "costs.yaml:5: mem_bytes_per_ns: 1e+13: expected a finite number from 0 to 1e12"},
		{"NaN", with("point_bytes", ".nan"), "costs.yaml:6: point_bytes: NaN: expected a finite number"},
		{"infinite", with("point_ns", ".inf"), "costs.yaml:1: point_ns: +Inf: expected a finite number"},
		{"eager float", with("eager_limit", "4096.5"), `costs.yaml:8: eager_limit: "4096.5": expected an integer (bytes)`},
		{"eager overflow", with("eager_limit", "99999999999999999999"), `costs.yaml:8: eager_limit: "99999999999999999999": expected an integer (bytes)`},
		{"eager negative", with("eager_limit", "-5"), "costs.yaml:8: eager_limit: -5: expected 0 or more bytes"},
		{"unknown key", good + "speed: 3\n", `costs.yaml:11: unknown key "speed": expected one of point_ns, flop_ns, byte_ns, fork_ns, mem_bytes_per_ns, point_bytes, call_ns, eager_limit`},
		{"key not a scalar", good + "[a]: 3\n", "costs.yaml:11: a key that is a list: expected one of point_ns"},
		{"repeated", good + "point_ns: 2\n", "costs.yaml:11: point_ns: repeated (first on line 1)"},
		{"missing", without("flop_ns"), "costs.yaml:1: missing flop_ns: every key is required (point_ns, flop_ns,"},
		{"missing two", strings.Replace(without("call_ns"), "flop_ns: 0.9\n", "", 1), "costs.yaml:1: missing flop_ns, call_ns: every key is required"},
		{"alias", "a: &x 1\n", `costs.yaml:1: unknown key "a"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "costs.yaml")
			if err := os.WriteFile(path, []byte(tc.in), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadCosts(path)
			if err == nil {
				t.Fatalf("accepted:\n%s", tc.in)
			}
			msg := strings.ReplaceAll(err.Error(), path, "costs.yaml")
			if !strings.Contains(msg, tc.want) {
				t.Errorf("error %q\nwant it to contain %q", msg, tc.want)
			}
		})
	}
}

// TestLoadCostsLimits: a missing file, and one beyond MaxCostsFileBytes.
func TestLoadCostsLimits(t *testing.T) {
	dir := t.TempDir()
	if _, err := LoadCosts(filepath.Join(dir, "none.yaml")); err == nil || !strings.Contains(err.Error(), "none.yaml") {
		t.Errorf("missing file: %v", err)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte(strings.Repeat("#\n", MaxCostsFileBytes)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCosts(big); err == nil || !strings.Contains(err.Error(), "larger than 65536 bytes") {
		t.Errorf("big file: %v", err)
	}
}

// TestWriteCostsRefuses: invalid costs, a note too long, a directory that
// is not there; nothing is left behind.
func TestWriteCostsRefuses(t *testing.T) {
	bad := DefaultCosts()
	bad.ForkNS = math.NaN()
	for _, tc := range []struct {
		name string
		path string
		c    Costs
		note string
		want string
	}{
		{"invalid", "c.yaml", bad, "", "c.yaml: not written: costs: fork_ns NaN"},
		{"note too long", "c.yaml", DefaultCosts(), strings.Repeat("x", MaxCostsFileBytes), "more than LoadCosts reads"},
		{"no directory", "none/c.yaml", DefaultCosts(), "", "none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			err := WriteCosts(filepath.Join(dir, tc.path), tc.c, tc.note)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			if left, _ := os.ReadDir(dir); len(left) > 0 {
				t.Errorf("left behind: %v", left)
			}
		})
	}
}

// FuzzLoadCosts: whatever LoadCosts accepts is valid and reads back
// exactly after WriteCosts.
func FuzzLoadCosts(f *testing.F) {
	f.Add([]byte("point_ns: 1.1\nflop_ns: 0.9\nbyte_ns: 0.1\nfork_ns: 600\nmem_bytes_per_ns: 10\npoint_bytes: 16\ncall_ns: 300\neager_limit: 4096\n"))
	f.Add([]byte("# note\npoint_ns: 0x10\nflop_ns: 1e3\nbyte_ns: .5\nfork_ns: 0\nmem_bytes_per_ns: 0\npoint_bytes: 0\ncall_ns: 0\neager_limit: 0o17\n"))
	f.Add([]byte("point_ns: fast\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := decodeCosts(data, "f.yaml")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.yaml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("accepted invalid costs: %v", err)
		}
		path := filepath.Join(dir, "c.yaml")
		note := string(data)
		if len(note) > MaxCostsFileBytes/4 {
			note = ""
		}
		if err := WriteCosts(path, c, note); err != nil {
			t.Fatal(err)
		}
		got, err := LoadCosts(path)
		if err != nil || got != c {
			t.Fatalf("read back %+v, %v; want %+v", got, err, c)
		}
	})
}
