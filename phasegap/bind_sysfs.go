package phasegap

import (
	"fmt"
	"os"
	"strings"
)

// siblings is the sysfs list of cpu's hyperthread siblings ("" when the
// kernel does not say).
func siblings(cpu int) string {
	b, err := os.ReadFile(fmt.Sprintf("/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", cpu))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
