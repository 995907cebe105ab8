package xspace

import "testing"

func TestTimeBase(t *testing.T) {
	for _, tc := range []struct {
		stat Stat
		want int64
		ok   bool
	}{
		{Int(StatTimeBase, 1682725897000000000), 1682725897000000000, true},
		{Uint(StatTimeBase, 7), 7, true},
		{Str(StatTimeBase, "7"), 0, false},
		{Int("other", 7), 0, false},
	} {
		b := NewPlaneBuilder(1, "/host:CPU")
		b.AddStat(tc.stat)
		if got, ok := TimeBase(b.Plane()); got != tc.want || ok != tc.ok {
			t.Errorf("TimeBase with %+v = %d, %v; want %d, %v", tc.stat, got, ok, tc.want, tc.ok)
		}
	}
}
