package netem

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestResultAccountsForEveryCopy: every Send's copies are delivered, lost
// or queue-dropped, and the per-call counts add up to the link's Stats.
func TestResultAccountsForEveryCopy(t *testing.T) {
	l, err := New(Params{
		Delay:     time.Millisecond,
		Duplicate: 0.3,
		Loss:      Loss{Model: LossRandom, Probability: 0.2},
		Rate:      Rate{BitsPerSecond: 1e6},
		Limit:     5,
	}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	var delivered, lost, queued, partial int
	for i := range 20000 {
		r := l.Send(int64(i)*200_000, 100)
		copies := r.N + r.Lost + r.QueueDropped
		if copies != 1 && copies != 2 {
			t.Fatalf("send %d: N=%d Lost=%d QueueDropped=%d", i, r.N, r.Lost, r.QueueDropped)
		}
		if copies == 2 && r.N == 1 {
			partial++
		}
		delivered += r.N
		lost += r.Lost
		queued += r.QueueDropped
	}
	st := l.Stats()
	if uint64(delivered) != st.Delivered || uint64(lost) != st.Lost || uint64(queued) != st.QueueDropped {
		t.Fatalf("results add up to %d/%d/%d, stats say %d/%d/%d", delivered, lost, queued, st.Delivered, st.Lost, st.QueueDropped)
	}
	if partial == 0 || queued == 0 {
		t.Fatalf("the test never exercised a half-dropped duplicate (%d) or the queue limit (%d)", partial, queued)
	}
}
