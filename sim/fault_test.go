package sim_test

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chronosync/chronosync/model/clockmodel"
	"github.com/chronosync/chronosync/sim"
	"github.com/chronosync/chronosync/world"
)

const ms = time.Millisecond

func TestCrashAndRestart(t *testing.T) {
	cfg := mesh(3, ms)
	cfg.Faults = []sim.Fault{{At: 100 * ms, Kind: sim.Crash, Node: 1, RestartAfter: 200 * ms}}
	starts := map[world.NodeID]int{}
	p := pinger{period: 10 * ms}
	_, lines := logged(t, cfg, func(id world.NodeID) world.Program {
		starts[id]++
		return p.program(id)
	}, 500*ms)
	if starts[1] != 2 || starts[0] != 1 {
		t.Fatalf("programs started %v, want node 1 twice (boot, restart) and the others once", starts)
	}
	var crashAt, bootAt time.Duration
	for _, e := range parse(t, lines) {
		switch {
		case e.kind == "crash" && e.node == 1:
			crashAt = e.t
		case e.kind == "boot" && e.node == 1 && e.fields["inc"] == "2":
			bootAt = e.t
		case e.kind == "send" && e.node == 1 && e.t > 100*ms && e.t < 300*ms:
			t.Errorf("crashed node sent at %v", e.t)
		case e.kind == "recv" && e.node == 1 && e.t > 100*ms && e.t < 300*ms:
			t.Errorf("crashed node received at %v", e.t)
		case e.kind == "drop" && e.fields["why"] == "nodedown" && (e.t <= 100*ms || e.t >= 301*ms):
			t.Errorf("nodedown drop at %v, outside the crash", e.t)
		}
	}
	if crashAt != 100*ms || bootAt != 300*ms {
		t.Fatalf("crash at %v, reboot at %v; want 100ms and 300ms", crashAt, bootAt)
	}
}

func TestPartitionAndHeal(t *testing.T) {
	cfg := mesh(3, ms)
	cfg.Faults = []sim.Fault{{At: 100 * ms, Kind: sim.Partition, Groups: [][]int{{0}, {1, 2}}, HealAfter: 100 * ms}}
	_, lines := logged(t, cfg, pinger{period: 10 * ms}.program, 300*ms)
	cutDrops, crossRecv := 0, 0
	for _, e := range parse(t, lines) {
		across := (e.node == 0) != (e.fields["to"] == "0" || e.fields["from"] == "0")
		inWindow := e.t >= 100*ms && e.t < 200*ms
		switch e.kind {
		case "drop":
			if e.fields["why"] != "partition" || !inWindow || !across {
				t.Errorf("unexpected drop %+v", e)
			}
			cutDrops++
		case "recv":
			// Sent before 100ms arrive by 101ms.
			if across && e.t > 101*ms && e.t < 200*ms {
				crossRecv++
			}
		}
	}
	// Every 10ms, 4 of the 6 directed pairs cross the cut: 10 rounds.
	if cutDrops != 40 || crossRecv != 0 {
		t.Fatalf("%d partition drops (want 40), %d receptions across the cut (want 0)", cutDrops, crossRecv)
	}
}

func TestLinkFlap(t *testing.T) {
	cfg := mesh(2, ms)
	cfg.Faults = []sim.Fault{{At: 95 * ms, Kind: sim.LinkFlap, From: 0, To: 1, Down: 20 * ms, Up: 30 * ms, Count: 3}}
	_, lines := logged(t, cfg, pinger{period: 10 * ms}.program, 400*ms)
	var drops []time.Duration
	downs, ups := 0, 0
	for _, e := range parse(t, lines) {
		switch e.kind {
		case "drop":
			if e.node != 0 || e.fields["why"] != "linkdown" {
				t.Errorf("unexpected drop %+v: only 0→1 flaps", e)
			}
			drops = append(drops, e.t)
		case "linkdown":
			downs++
		case "linkup":
			ups++
		}
	}
	// Down windows: [95,115) [145,165) [195,215): pings at 100,110 / 150,160 / 200,210.
	want := []time.Duration{100 * ms, 110 * ms, 150 * ms, 160 * ms, 200 * ms, 210 * ms}
	if len(drops) != len(want) || downs != 3 || ups != 3 {
		t.Fatalf("drops at %v (want %v), %d downs and %d ups (want 3 and 3)", drops, want, downs, ups)
	}
	for i := range want {
		if drops[i] != want[i] {
			t.Fatalf("drops at %v, want %v", drops, want)
		}
	}
}

func TestClockStep(t *testing.T) {
	cfg := mesh(1, ms)
	cfg.Faults = []sim.Fault{{At: 50 * ms, Kind: sim.ClockStep, Node: 0, By: -7 * ms}}
	var s *sim.Sim
	readings := map[time.Duration]int64{}
	prog := func(world.NodeID) world.Program {
		return world.ProgramFunc(func(env world.Env) error {
			for _, at := range []time.Duration{49 * ms, 51 * ms} {
				env.AfterFunc(at, func() { readings[at] = int64(env.Host().Now()) })
			}
			return nil
		})
	}
	s, err := sim.New(cfg, prog, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Run(100 * ms)
	if got := readings[51*ms] - readings[49*ms]; got != int64(2*ms-7*ms) {
		t.Fatalf("clock advanced %v across the step, want 2ms-7ms", time.Duration(got))
	}
}

func TestSlowNodeDelaysCallbacksNotTimestamps(t *testing.T) {
	cfg := mesh(2, ms)
	cfg.Nodes[1].Clock = clockmodel.Params{}
	cfg.Faults = []sim.Fault{{At: 0, Kind: sim.SlowNode, Node: 1, ExtraDelay: 5 * ms, For: time.Second}}
	var s *sim.Sim
	var rx, handled []time.Duration
	prog := func(id world.NodeID) world.Program {
		return world.ProgramFunc(func(env world.Env) error {
			c, err := env.ListenPacket(1, func(p world.Packet) {
				rx = append(rx, time.Duration(p.RxTime))
				handled = append(handled, s.Now())
			})
			if err != nil {
				return err
			}
			if id == 0 {
				env.AfterFunc(10*ms, func() { _, _ = c.Send(world.Addr{Node: 1, Port: 1}, []byte("x")) })
			}
			return nil
		})
	}
	s, err := sim.New(cfg, prog, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Run(100 * ms)
	if len(rx) != 1 || rx[0] != 11*ms || handled[0] != 16*ms {
		t.Fatalf("rx timestamps %v handled at %v; want the datagram stamped at its 11ms arrival and handled 5ms later", rx, handled)
	}
}

// TestChargeHoldsCallbacks: work a callback charges (world.Charger) holds
// the node's later callbacks until it ends, in the order they fell due, without
// moving a datagram's receive timestamp; a timer set after the charge
// runs when the work ends; the log records it.
func TestChargeHoldsCallbacks(t *testing.T) {
	cfg := mesh(2, ms)
	cfg.Nodes[1].Clock = clockmodel.Params{}
	var s *sim.Sim
	var got []string
	prog := func(id world.NodeID) world.Program {
		return world.ProgramFunc(func(env world.Env) error {
			c, err := env.ListenPacket(1, func(p world.Packet) {
				got = append(got, fmt.Sprintf("rx %s stamped %v handled %v", p.Data, time.Duration(p.RxTime), s.Now()))
			})
			if err != nil {
				return err
			}
			switch id {
			case 0:
				// Arrive at 11 and 12 ms, during node 1's work.
				env.AfterFunc(10*ms, func() { _, _ = c.Send(world.Addr{Node: 1, Port: 1}, []byte("a")) })
				env.AfterFunc(11*ms, func() { _, _ = c.Send(world.Addr{Node: 1, Port: 1}, []byte("b")) })
			case 1:
				env.AfterFunc(10*ms, func() {
					env.(world.Charger).Charge(5 * ms)
					env.AfterFunc(0, func() { got = append(got, fmt.Sprintf("after the work %v", s.Now())) })
				})
				env.AfterFunc(13*ms, func() { got = append(got, fmt.Sprintf("timer due 13ms ran %v", s.Now())) })
			}
			return nil
		})
	}
	var log bytes.Buffer
	s, err := sim.New(cfg, prog, sim.Options{EventLog: &log})
	if err != nil {
		t.Fatal(err)
	}
	s.Run(100 * ms)
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(log.String(), "\n")
	// At the work's end the held callbacks run in the order they fell
	// due: the timer set at 10 ms for after the work, the datagrams of
	// 11 and 12 ms, the timer of 13 ms.
	want := []string{
		"after the work 15ms",
		"rx a stamped 11ms handled 15ms",
		"rx b stamped 12ms handled 15ms",
		"timer due 13ms ran 15ms",
	}
	if !slices.Equal(got, want) {
		t.Errorf("callbacks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	busy := 0
	for _, l := range lines {
		if strings.Contains(l, " busy n=1 ns=5000000") {
			busy++
		}
	}
	if busy != 1 {
		t.Errorf("%d busy records of 5 ms on node 1 in the log:\n%s", busy, strings.Join(lines, "\n"))
	}
}
