//go:build linux

package netlab

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ethtoolValue is the kernel's struct ethtool_value.
type ethtoolValue struct {
	cmd  uint32
	data uint32
}

// ifreqData is the kernel's struct ifreq with ifr_data set.
type ifreqData struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [24 - unsafe.Sizeof(uintptr(0))]byte // the rest of the union
}

// offloads are the legacy ethtool commands, set to 0, that make every
// frame on a veth a real, MTU-sized frame with its checksum filled in:
// `ethtool -K dev gro off gso off tso off tx off`. TX checksum goes last:
// turning it off also turns off the features that depend on it.
var offloads = [...]struct {
	name     string
	set, get uint32
}{
	{"gro", unix.ETHTOOL_SGRO, unix.ETHTOOL_GGRO},
	{"gso", unix.ETHTOOL_SGSO, unix.ETHTOOL_GGSO},
	{"tso", unix.ETHTOOL_STSO, unix.ETHTOOL_GTSO},
	{"tx-checksum", unix.ETHTOOL_STXCSUM, unix.ETHTOOL_GTXCSUM},
}

// ethtool issues one SIOCETHTOOL ethtool_value command on ifname in the
// calling thread's namespace and returns the value the kernel left.
func ethtool(ifname string, cmd, data uint32) (uint32, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	v := ethtoolValue{cmd: cmd, data: data}
	var ifr ifreqData
	copy(ifr.name[:unix.IFNAMSIZ-1], ifname)
	ifr.data = unsafe.Pointer(&v)
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr))); errno != 0 {
		return 0, errno
	}
	return v.data, nil
}

// disableOffloads turns off the offloads (see offloads) of ifname in the
// calling thread's namespace.
func disableOffloads(ifname string) error {
	for _, o := range offloads {
		if _, err := ethtool(ifname, o.set, 0); err != nil {
			return fmt.Errorf("turn %s off on %s: %w", o.name, ifname, err)
		}
	}
	return nil
}

// offloadsOn returns the names of the offloads still on for ifname in the
// calling thread's namespace.
func offloadsOn(ifname string) ([]string, error) {
	var on []string
	for _, o := range offloads {
		v, err := ethtool(ifname, o.get, 0)
		if err != nil {
			return nil, fmt.Errorf("read %s of %s: %w", o.name, ifname, err)
		}
		if v != 0 {
			on = append(on, o.name)
		}
	}
	return on, nil
}
