package sim_test

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chronosync/chronosync/model/netem"
	"github.com/chronosync/chronosync/sim"
	"github.com/chronosync/chronosync/world"
)

// mesh returns a config of n ideal-clock nodes, fully meshed with links of
// the given one-way delay.
func mesh(n int, delay time.Duration) sim.Config {
	cfg := sim.Config{Seed: 1}
	for i := range n {
		cfg.Nodes = append(cfg.Nodes, sim.NodeConfig{})
		for j := range n {
			if i != j {
				cfg.Links = append(cfg.Links, sim.LinkConfig{From: i, To: j, Params: netem.Params{Delay: delay}})
			}
		}
	}
	return cfg
}

// logged runs cfg for d and returns the simulator and its event log lines.
func logged(t *testing.T, cfg sim.Config, prog func(world.NodeID) world.Program, d time.Duration) (*sim.Sim, []string) {
	t.Helper()
	var buf bytes.Buffer
	s, err := sim.New(cfg, prog, sim.Options{EventLog: &buf})
	if err != nil {
		t.Fatal(err)
	}
	s.Run(d)
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	return s, strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
}

// event is one parsed event-log line.
type event struct {
	t      time.Duration
	kind   string
	node   int
	fields map[string]string
}

var lineRE = regexp.MustCompile(`^\d+ (-?\d+) (\w+) n=(-?\d+)(.*)$`)

func parse(t *testing.T, lines []string) []event {
	t.Helper()
	var evs []event
	for _, l := range lines {
		m := lineRE.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("malformed event line %q", l)
		}
		ts, _ := strconv.ParseInt(m[1], 10, 64)
		node, _ := strconv.Atoi(m[3])
		e := event{t: time.Duration(ts), kind: m[2], node: node, fields: map[string]string{}}
		for _, f := range strings.Fields(m[4]) {
			k, v, _ := strings.Cut(f, "=")
			e.fields[k] = v
		}
		evs = append(evs, e)
	}
	return evs
}

// pinger sends one datagram to every other node every period (until its
// host clock reads until, if set) and may record what it receives.
type pinger struct {
	period time.Duration
	until  time.Duration
	got    *[]event // receptions: t, node, from
	s      **sim.Sim
}

func (p pinger) program(id world.NodeID) world.Program {
	return world.ProgramFunc(func(env world.Env) error {
		c, err := env.ListenPacket(1, func(pk world.Packet) {
			if p.got != nil {
				*p.got = append(*p.got, event{t: (*p.s).Now(), node: int(id), fields: map[string]string{"from": strconv.Itoa(int(pk.From.Node))}})
			}
		})
		if err != nil {
			return err
		}
		payload := []byte("0123456789abcdef")
		var tick func()
		tick = func() {
			for j := range env.Nodes() {
				if world.NodeID(j) != id {
					_, _ = c.Send(world.Addr{Node: world.NodeID(j), Port: 1}, payload)
				}
			}
			if p.until == 0 || env.Host().Now() < world.Time(p.until) {
				env.AfterFunc(p.period, tick)
			}
		}
		env.AfterFunc(p.period, tick)
		return nil
	})
}
