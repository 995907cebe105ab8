package real

import (
	"bytes"
	"io"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/chronosync/chronosync/world"
)

// TestReadMessageAllocatesAsBytesArrive: a peer that declares a message of
// world.MaxMessageSize and sends 64 bytes costs a chunk, not the size it
// declared (sixteen such connections grew the heap by 258 MiB before);
// whole messages of every size read back intact.
func TestReadMessageAllocatesAsBytesArrive(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 16 {
		if _, err := readMessage(bytes.NewReader(make([]byte, 64)), world.MaxMessageSize); err != io.ErrUnexpectedEOF {
			t.Fatalf("short message: err %v, want io.ErrUnexpectedEOF", err)
		}
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 16*2*readChunk {
		t.Errorf("16 messages declared at %d bytes, 64 sent: %d bytes allocated, want at most %d", world.MaxMessageSize, grew, 16*2*readChunk)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{0, 1, readChunk - 1, readChunk, readChunk + 1, 5*readChunk + 17, 3 << 20} {
		want := make([]byte, size)
		for i := range want {
			want[i] = byte(r.Uint32())
		}
		got, err := readMessage(bytes.NewReader(want), size)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("message of %d bytes: read %d bytes, err %v; want it intact", size, len(got), err)
		}
	}
}

// TestBacklog: a loop holds at most maxBacklog callbacks from the
// network; a datagram beyond that is refused at once, a stream's message
// waits for room.
func TestBacklog(t *testing.T) {
	l := newLoop(nil, func(v any) { panic(v) })
	ran := 0
	for i := range maxBacklog {
		if !l.postNet(func() { ran++ }, false) {
			t.Fatalf("datagram %d of %d refused", i, maxBacklog)
		}
	}
	if l.postNet(func() { ran++ }, false) {
		t.Fatal("a datagram beyond the backlog was queued")
	}
	posted := make(chan bool)
	go func() { posted <- l.postNet(func() { ran++ }, true) }()
	select {
	case <-posted:
		t.Fatal("a stream message was queued beyond the backlog without waiting")
	case <-time.After(50 * time.Millisecond):
	}
	l.start()
	if !<-posted {
		t.Fatal("the waiting stream message was not queued once the loop ran")
	}
	drained := make(chan struct{})
	l.post(func() { close(drained) })
	<-drained
	l.stop(false)
	if ran != maxBacklog+1 {
		t.Errorf("%d callbacks ran, want the %d queued", ran, maxBacklog+1)
	}
}
