package real

import "github.com/chronosync/chronosync/world"

// HostSteps returns how many steps node i's injected host clock has taken
// by true time t and their sum in ns.
func (w *World) HostSteps(i world.NodeID, t int64) (int, int64) {
	c := w.nodes[i].clock
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.model.StepsAt(t)
}
