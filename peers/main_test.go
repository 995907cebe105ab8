package peers

import (
	"os"
	"testing"

	"github.com/chronosync/chronosync/real/shaper"
)

// TestMain lets this test binary serve as the shaper child of the real
// runs its tests start (see shaper.StartProcess).
func TestMain(m *testing.M) {
	shaper.MaybeChild()
	os.Exit(m.Run())
}
