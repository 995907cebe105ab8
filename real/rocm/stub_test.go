//go:build !rocm

package rocm

import (
	"errors"
	"testing"
)

func TestOpenNotBuilt(t *testing.T) {
	c, err := Open()
	if !errors.Is(err, ErrNotBuilt) {
		t.Fatalf("Open() error = %v, want ErrNotBuilt", err)
	}
	if c != nil {
		t.Errorf("Open() clock = %v, want nil", c)
	}
}
