package wire_test

import (
	"fmt"

	"github.com/chronosync/chronosync/rounds/syncpb"
	"github.com/chronosync/chronosync/rounds/wire"
)

func ExampleMarshal() {
	env := &syncpb.Envelope{Body: &syncpb.Envelope_Heartbeat{
		Heartbeat: &syncpb.Heartbeat{Seq: 7, SentNs: 1_500_000},
	}}
	frame, err := wire.Marshal(env, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("% x\n", frame)

	got, err := wire.Unmarshal(frame, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(wire.Kind(got), got.GetHeartbeat().GetSeq(), got.GetHeartbeat().GetSentNs())

	// A frame whose prefix declares more than the cap is refused unread.
	_, err = wire.Unmarshal([]byte{0x04, 0x2c, 0x1d, 0x80}, 0)
	fmt.Println(err)
	// Output:
	// 00 00 00 08 2a 06 08 07 10 e0 c6 5b
	// heartbeat 7 1500000
	// wire: frame declares 70000000 bytes, cap 1048576
}
