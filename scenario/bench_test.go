package scenario

import "testing"

func BenchmarkResolveBench1000(b *testing.B) {
	s, err := Load("../scenarios/bench1000.yaml")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := s.Resolve(s.Seed); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseQuickstart(b *testing.B) {
	data := []byte(withHead("clocks:", "  default: {offset: \"uniform(-1ms, 1ms)\"}", "links:", "  default: {delay: 50us}"))
	for b.Loop() {
		if _, err := Parse("x.yaml", data); err != nil {
			b.Fatal(err)
		}
	}
}
