package real

// The real backend's dependencies, kept in go.mod while its packages are
// being written (see docs/dependencies.md).
import (
	_ "github.com/vishvananda/netlink"
	_ "github.com/vishvananda/netns"
	_ "golang.org/x/sys/unix"
)
