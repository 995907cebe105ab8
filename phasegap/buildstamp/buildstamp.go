// Package buildstamp says which source a chronosync binary was built
// from: the Go toolchain's own VCS stamp (vcs.revision, written when the
// build runs in a git work tree with -buildvcs on), or, where that stamp
// is off (a worktree without .git, -buildvcs=false, a tarball build), the
// revision the Makefile passes at build time:
//
//	go build -ldflags "-X github.com/chronosync/chronosync/phasegap/buildstamp.Revision=$(git rev-parse HEAD)"
//
// `make build` and `make build-mpi` do so, leaving it empty when git is
// absent.
package buildstamp

import (
	"regexp"
	"runtime/debug"
)

// Revision is the git revision set at link time (-ldflags -X); empty
// when the build set none. It is written by the linker only.
var Revision string

// Where a revision came from (Stamp.Source).
const (
	SourceVCS     = "vcs"     // debug.ReadBuildInfo's vcs.revision
	SourceLDFlags = "ldflags" // Revision, set at link time
	SourceNone    = "none"    // neither: the SHA is "unknown"
)

// Unknown is the SHA recorded when neither stamp is there.
const Unknown = "unknown"

// Stamp is the binary's revision and where it came from.
type Stamp struct {
	SHA      string // a 40-hex revision, or Unknown
	Source   string // SourceVCS, SourceLDFlags or SourceNone
	Modified string // vcs.modified: "true" (uncommitted changes), "false", or "" (unknown)
}

// Read is this binary's stamp.
func Read() Stamp {
	var settings []debug.BuildSetting
	if bi, ok := debug.ReadBuildInfo(); ok {
		settings = bi.Settings
	}
	return Resolve(settings, Revision)
}

var hexSHA = regexp.MustCompile(`^[0-9a-f]{7,64}$`)

// Resolve picks the revision: vcs.revision from the build settings,
// else ldflags (the link-time Revision) when it looks like a git
// revision, else Unknown.
func Resolve(settings []debug.BuildSetting, ldflags string) Stamp {
	s := Stamp{SHA: Unknown, Source: SourceNone}
	for _, b := range settings {
		switch b.Key {
		case "vcs.revision":
			if b.Value != "" {
				s.SHA, s.Source = b.Value, SourceVCS
			}
		case "vcs.modified":
			s.Modified = b.Value
		}
	}
	if s.Source == SourceNone && hexSHA.MatchString(ldflags) {
		s.SHA, s.Source = ldflags, SourceLDFlags
	}
	return s
}
