package rounds

import (
	"testing"

	"github.com/chronosync/chronosync/rounds/syncpb"
	"github.com/chronosync/chronosync/rounds/wire"
	"github.com/chronosync/chronosync/world"
)

// FuzzResultDoor feeds node 1's agent any frame on its master connection
// after it reported round 1: it must not panic, and a model reaches its
// observer only when it is node 1's, of round 1's reported window, within
// the run files' bounds; each frame is either taken once, dropped and
// counted, or no result at all.
func FuzzResultDoor(f *testing.F) {
	good := honestResult()
	for _, msg := range []*syncpb.RoundResult{good, {NodeId: 2, RoundId: 1}, {NodeId: 1, RoundId: 1, OffsetNs: 1e300}} {
		b, err := mustFrameF(msg)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0, 0, 0, 4, 0x9a, 0x06, 0x01, 0x00})
	f.Fuzz(func(t *testing.T, frame []byte) {
		if env, err := wire.Unmarshal(frame, 0); err == nil && env.GetRoundResult() == nil {
			return // another kind: this agent has no prober to start
		}
		n, obs, conn, _ := resultAgent(t, 1, honestReports()[1].d)
		agentConn{n}.OnMessage(conn, frame)
		s := n.Stats()
		if s.Results+n.dropped() > 1 {
			t.Fatalf("one frame taken or dropped more than once: %+v", s)
		}
		ms := obs.models[world.NodeID(1)]
		if len(ms) != s.Results || len(obs.models) > 1 {
			t.Fatalf("%d models for %d results taken: %v", len(ms), s.Results, obs.models)
		}
		for _, m := range ms {
			o := m.Offset
			if field, msg := o.Check(); field != "" {
				t.Fatalf("model out of bounds taken: %s: %s", field, msg)
			}
			if o.NodeID != 1 || o.RoundID != 1 || o.WindowID != 1 || o.WindowStartNS != 0 || o.WindowEndNS != 1e9 {
				t.Fatalf("model of another node, round or window taken: %+v", o)
			}
		}
	})
}

func mustFrameF(msg *syncpb.RoundResult) ([]byte, error) {
	return wire.Marshal(&syncpb.Envelope{Body: &syncpb.Envelope_RoundResult{RoundResult: msg}}, 0)
}
