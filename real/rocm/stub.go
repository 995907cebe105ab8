//go:build !rocm

package rocm

// Clock is the HSA system timestamp clock. In this build (without the rocm
// tag) there is none: Open always fails.
type Clock struct{}

// Open returns ErrNotBuilt: this binary was built without the rocm tag.
func Open() (*Clock, error) { return nil, ErrNotBuilt }

// Now returns 0; no Clock exists in this build.
func (*Clock) Now() int64 { return 0 }

// Close returns ErrNotBuilt; no Clock exists in this build.
func (*Clock) Close() error { return ErrNotBuilt }
