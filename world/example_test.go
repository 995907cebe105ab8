package world_test

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/chronosync/chronosync/model/clockmodel"
	"github.com/chronosync/chronosync/model/netem"
	"github.com/chronosync/chronosync/sim"
	"github.com/chronosync/chronosync/world"
)

// A program is written once against world.Env: node 0 sends its host clock
// reading to node 1, which compares it with the datagram's receive
// timestamp. Here it runs in the simulator, node 1's clock 2ms ahead, on a
// 500µs link; the same program runs unchanged on the real backend.
func Example() {
	program := func(id world.NodeID) world.Program {
		return world.ProgramFunc(func(env world.Env) error {
			conn, err := env.ListenPacket(9, func(p world.Packet) {
				sent := world.Time(binary.BigEndian.Uint64(p.Data))
				fmt.Printf("node %d: received %v after the sender's clock read %v\n", env.Node(), p.RxTime.Sub(sent), time.Duration(sent))
			})
			if err != nil {
				return err
			}
			if id == 0 {
				env.AfterFunc(10*time.Millisecond, func() {
					msg := binary.BigEndian.AppendUint64(nil, uint64(env.Host().Now()))
					if _, err := conn.Send(world.Addr{Node: 1, Port: 9}, msg); err != nil {
						env.Logger().Error("send failed", "err", err)
					}
				})
			}
			return nil
		})
	}
	cfg := sim.Config{
		Nodes:       []sim.NodeConfig{{}, {Clock: clockmodel.Params{Offset: 2 * time.Millisecond}}},
		DefaultLink: netem.Params{Delay: 500 * time.Microsecond},
	}
	w, err := sim.New(cfg, program, sim.Options{})
	if err != nil {
		panic(err)
	}
	w.Run(time.Second)
	// Output: node 1: received 2.5ms after the sender's clock read 10ms
}
