package halo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseCostsAsLoadCosts: ParseCosts (the harness's decoder of the
// bytes it copies into a run directory, read once) accepts and refuses as
// LoadCosts does, with the same errors, and refuses more than
// MaxCostsFileBytes.
func TestParseCostsAsLoadCosts(t *testing.T) {
	good := "point_ns: 1.1\nflop_ns: 0.9\nbyte_ns: 0.1\nfork_ns: 600\nmem_bytes_per_ns: 10\npoint_bytes: 16\ncall_ns: 300\neager_limit: 4096\nimbalance_ns: 0\nimbalance_frac: 0\n"
	for _, tc := range []struct{ name, in, want string }{
		{"good", good, ""},
		{"bad value", strings.Replace(good, "flop_ns: 0.9", "flop_ns: -3", 1), "costs.yaml:2: flop_ns: -3"},
		{"too large", good + "# " + strings.Repeat("x", MaxCostsFileBytes) + "\n", "larger than 65536 bytes (halo.MaxCostsFileBytes)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "costs.yaml")
			if err := os.WriteFile(path, []byte(tc.in), 0o644); err != nil {
				t.Fatal(err)
			}
			loaded, lerr := LoadCosts(path)
			parsed, perr := ParseCosts([]byte(tc.in), path)
			if tc.want == "" {
				if lerr != nil || perr != nil || parsed != loaded {
					t.Errorf("LoadCosts %+v, %v; ParseCosts %+v, %v", loaded, lerr, parsed, perr)
				}
				return
			}
			if perr == nil || !strings.Contains(perr.Error(), tc.want) {
				t.Errorf("ParseCosts: %v, want %q", perr, tc.want)
			}
			if lerr == nil || (tc.name != "too large" && lerr.Error() != perr.Error()) {
				t.Errorf("LoadCosts: %v\nParseCosts: %v", lerr, perr)
			}
		})
	}
}
