package clockmodel_test

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/chronosync/chronosync/model/clockmodel"
)

func Example() {
	host, err := clockmodel.New(clockmodel.Params{
		Offset:      5 * time.Millisecond,
		PPM:         100,
		Granularity: time.Microsecond,
		Steps:       []clockmodel.Step{{At: 2 * time.Second, By: -time.Millisecond}},
	}, nil, nil)
	if err != nil {
		panic(err)
	}
	tracer, err := clockmodel.NewTracer(host, clockmodel.TracerParams{Offset: time.Hour, PPM: -100}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		panic(err)
	}
	// S = 5ms + t + 100e-6·t, with a −1ms step at 2s; R = 1h + (1 − 100e-6)·S₀,
	// S₀ being S without its steps (a tracer clock does not step with its host).
	for _, t := range []int64{1e9, 2e9} {
		fmt.Printf("t=%v  S ideal %d  S read %d  R %d\n", time.Duration(t), host.Ideal(t), host.Read(t), tracer.Read(t))
	}
	fmt.Println("a 1ms timer set at 1s fires at true time", host.TrueAfter(1e9, 1e6))
	// Output:
	// t=1s  S ideal 1005100000  S read 1005100000  R 3601004999490
	// t=2s  S ideal 2004200000  S read 2004200000  R 3602004999480
	// a 1ms timer set at 1s fires at true time 1000999901
}
