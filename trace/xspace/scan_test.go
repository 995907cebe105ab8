package xspace

import (
	"bytes"
	"errors"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/chronosync/chronosync/trace/xplanepb"
)

func TestScanPlanes(t *testing.T) {
	space := &xplanepb.XSpace{Hostnames: []string{"host-a", "host-b"}, Errors: []string{"skipped"}}
	for i, name := range []string{"/host:CPU", "/device:GPU:0", "/device:GPU:1"} {
		b := NewPlaneBuilder(int64(i), name)
		b.Line(1, "stream", 1000).Add("kernel", 1000+int64(i), 10)
		space.Planes = append(space.Planes, b.Plane())
	}
	data, err := proto.MarshalOptions{Deterministic: true}.Marshal(space)
	if err != nil {
		t.Fatal(err)
	}
	var names, hosts []string
	err = ScanPlanes(bytes.NewReader(data), 0, func(p *xplanepb.XPlane) error {
		names = append(names, p.Name)
		if len(p.Lines) != 1 || len(p.Lines[0].Events) != 1 {
			t.Errorf("plane %s: lines %v", p.Name, p.Lines)
		}
		return nil
	}, func(h string) error { hosts = append(hosts, h); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if got := len(names); got != 3 || names[1] != "/device:GPU:0" || len(hosts) != 2 || hosts[1] != "host-b" {
		t.Fatalf("planes %v hosts %v", names, hosts)
	}

	// A bound on a plane's size, a truncated file, and an error from the callback.
	if err := ScanPlanes(bytes.NewReader(data), 8, func(*xplanepb.XPlane) error { return nil }, nil); err == nil {
		t.Error("a plane over maxPlane was read")
	}
	var ce *CorruptError
	if err := ScanPlanes(bytes.NewReader(data[:len(data)-3]), 0, func(*xplanepb.XPlane) error { return nil }, nil); !errors.As(err, &ce) {
		t.Errorf("truncated: %v, want a CorruptError", err)
	}
	stop := errors.New("stop")
	if err := ScanPlanes(bytes.NewReader(data), 0, func(*xplanepb.XPlane) error { return stop }, nil); !errors.Is(err, stop) {
		t.Errorf("callback's error: %v", err)
	}
}
