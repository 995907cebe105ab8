package syncrun

import (
	"errors"
	"fmt"
	"io"

	"github.com/chronosync/chronosync/estimate"
	"github.com/chronosync/chronosync/infile"
	"github.com/chronosync/chronosync/probe/probelog"
	"github.com/chronosync/chronosync/rounds"
)

// probeStream reads a probe stream (probes.bin) as many times as
// rounds.ReportsKindsStream asks, so that the re-estimation never holds the
// whole of it: the first reader is opened at once, for the stream's Meta.
type probeStream struct {
	path  string
	first *probelog.Reader
	files []io.Closer
}

// openProbeStream opens path's probe stream and reads its header.
func openProbeStream(path string) (*probeStream, probelog.Meta, error) {
	s := &probeStream{path: path}
	r, err := s.reader()
	if err != nil {
		return nil, probelog.Meta{}, errors.Join(err, s.Close())
	}
	s.first = r
	return s, r.Meta(), nil
}

func (s *probeStream) reader() (*probelog.Reader, error) {
	f, err := infile.Open(s.path, infile.ProbeLog)
	if err != nil {
		return nil, err
	}
	s.files = append(s.files, f)
	r, err := probelog.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.path, err)
	}
	return r, nil
}

// open hands out the first reader, then a new one from the start of the
// file at each call; its errors name the file, as ReadProbes's do.
func (s *probeStream) open() (rounds.BlockReader, error) {
	r := s.first
	s.first = nil
	if r == nil {
		var err error
		if r, err = s.reader(); err != nil {
			return nil, err
		}
	}
	return pathReader{r: r, path: s.path}, nil
}

// Close closes every file the stream opened.
func (s *probeStream) Close() error {
	var errs []error
	for _, f := range s.files {
		errs = append(errs, f.Close())
	}
	s.files = nil
	return errors.Join(errs...)
}

// pathReader leads a reader's errors with the file's path.
type pathReader struct {
	r    *probelog.Reader
	path string
}

func (p pathReader) Next() (*probelog.Block, error) {
	b, err := p.r.Next()
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", p.path, err)
	}
	return b, err
}

// streamReports fits the probe stream at path with each estimator of kinds
// as rounds.ReportsKinds would fit the whole of it, holding one window's
// blocks at a time; visit, when not nil, sees every block once. setup,
// when not nil, gets the stream's Meta before anything is fitted and may
// change the estimator options. On an error the reports of the blocks
// before it come back with it (none when the file cannot be opened): one
// empty list per kind at least.
func streamReports(path string, eo estimate.Options, kinds []estimate.Kind, setup func(probelog.Meta, *estimate.Options), visit func(*probelog.Block)) ([][]rounds.OfflineRound, probelog.Meta, error) {
	empty := make([][]rounds.OfflineRound, len(kinds))
	s, meta, err := openProbeStream(path)
	if err != nil {
		return empty, meta, err
	}
	if setup != nil {
		setup(meta, &eo)
	}
	reports, err := rounds.ReportsKindsStream(s.open, eo, kinds, visit)
	err = errors.Join(err, s.Close())
	if reports == nil {
		reports = empty
	}
	return reports, meta, err
}
