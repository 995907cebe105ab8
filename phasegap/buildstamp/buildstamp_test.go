package buildstamp

import (
	"runtime/debug"
	"testing"
)

func TestResolve(t *testing.T) {
	const a, b = "0123456789abcdef0123456789abcdef01234567", "fedcba9876543210fedcba9876543210fedcba98"
	vcs := []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: a}, {Key: "vcs.modified", Value: "true"}}
	for _, c := range []struct {
		name     string
		settings []debug.BuildSetting
		ldflags  string
		want     Stamp
	}{
		{"vcs stamp wins", vcs, b, Stamp{a, SourceVCS, "true"}},
		{"vcs only", vcs, "", Stamp{a, SourceVCS, "true"}},
		{"vcs off: ldflags", []debug.BuildSetting{{Key: "-ldflags", Value: "-X ..."}}, b, Stamp{b, SourceLDFlags, ""}},
		{"neither", nil, "", Stamp{Unknown, SourceNone, ""}},
		{"ldflags not a revision (git absent at build time)", nil, "fatal: not a git repository", Stamp{Unknown, SourceNone, ""}},
		{"empty vcs.revision", []debug.BuildSetting{{Key: "vcs.revision", Value: ""}}, b, Stamp{b, SourceLDFlags, ""}},
	} {
		if got := Resolve(c.settings, c.ldflags); got != c.want {
			t.Errorf("%s: Resolve = %+v, want %+v", c.name, got, c.want)
		}
	}
}
