package offsets

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/chronosync/chronosync/infile"
)

// MaxLineBytes bounds one line; a longer one is an error.
const MaxLineBytes = 16 << 20

// errLongMsg is the message of a line longer than MaxLineBytes.
const errLongMsg = "line longer than 16 MiB (offsets.MaxLineBytes)"

// Info describes a file the readers read.
type Info struct {
	Meta Meta
	// Lines is the number of complete lines read, the meta line included.
	Lines int
	// Torn reports that the input ended in a line with no trailing newline,
	// as a crash during an append leaves it. That line was ignored; TornBytes
	// is its length. OpenAppend cuts such a line off.
	Torn      bool
	TornBytes int
}

// ReadOffsets reads an offsets.jsonl file (see DecodeOffsets).
func ReadOffsets(path string) (Info, []Offset, error) {
	f, err := infile.Open(path, infile.Offsets)
	if err != nil {
		return Info{}, nil, err
	}
	defer f.Close()
	return DecodeOffsets(f, path)
}

// DecodeOffsets reads offsets.jsonl from r; name names it in errors. A
// second record of one round and node is an error (see records). Errors
// are *LineError values, except those of r itself.
func DecodeOffsets(r io.Reader, name string) (Info, []Offset, error) {
	var offs []Offset
	var seen records
	specs := map[string]*recordSpec{"offset": offsetSpec}
	info, err := decode(r, name, FileOffsets, specs, `"offset"`, func(rec any, line int) error {
		offs = append(offs, *rec.(*Offset))
		return seen.add(rec, line)
	})
	return info, offs, err
}

// ReadRounds reads a rounds.jsonl file (see DecodeRounds).
func ReadRounds(path string) (Info, []Edge, []Round, error) {
	f, err := infile.Open(path, infile.Offsets)
	if err != nil {
		return Info{}, nil, nil, err
	}
	defer f.Close()
	return DecodeRounds(f, path)
}

// DecodeRounds reads rounds.jsonl from r; name names it in errors. It
// returns the edge and the round records, each in file order. A second
// round line of one round, or a second edge of one round, source and
// destination, is an error (see records). Errors are *LineError values,
// except those of r itself.
func DecodeRounds(r io.Reader, name string) (Info, []Edge, []Round, error) {
	var edges []Edge
	var rounds []Round
	var seen records
	specs := map[string]*recordSpec{"edge": edgeSpec, "round": roundSpec}
	info, err := decode(r, name, FileRounds, specs, `"edge" or "round"`, func(rec any, line int) error {
		switch rec := rec.(type) {
		case *Edge:
			edges = append(edges, *rec)
		case *Round:
			rounds = append(rounds, *rec)
		}
		return seen.add(rec, line)
	})
	return info, edges, rounds, err
}

// decode reads the meta line of a file of kind file, then every record,
// handing each to add with its line; an error of add is the line's.
func decode(r io.Reader, name, file string, specs map[string]*recordSpec, expected string, add func(rec any, line int) error) (Info, error) {
	var info Info
	br := bufio.NewReaderSize(r, 64<<10)
	lineErr := func(msg string) error { return &LineError{File: name, Line: info.Lines + 1, Msg: msg} }
	for {
		line, err := readLine(br)
		if err == io.EOF {
			if info.Lines == 0 {
				return info, lineErr("expected a meta line, got an empty file")
			}
			return info, nil
		}
		if err == errTorn {
			if info.Lines == 0 {
				return info, lineErr("expected a meta line, got a torn line with no trailing newline")
			}
			info.Torn, info.TornBytes = true, len(line)
			return info, nil
		}
		if err == errLong {
			return info, lineErr(errLongMsg)
		}
		if err != nil {
			return info, fmt.Errorf("%s: %w", name, err)
		}
		if info.Lines == 0 {
			if info.Meta, err = decodeMeta(line, file, true); err != nil {
				return info, lineErr(err.Error())
			}
		} else {
			rec, err := decodeRecord(line, specs, expected)
			if err != nil {
				return info, lineErr(err.Error())
			}
			if err := add(rec, info.Lines+1); err != nil {
				return info, lineErr(err.Error())
			}
		}
		info.Lines++
	}
}

// Errors of readLine: a final line with no trailing newline, a line over
// MaxLineBytes.
var (
	errTorn = errors.New("torn line")
	errLong = errors.New("line too long")
)

// readLine returns the next line without its newline: io.EOF at the end,
// errTorn with the bytes of a final line that has no newline, errLong.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		buf := bytes.Clone(line)
		for err == bufio.ErrBufferFull && len(buf) <= MaxLineBytes {
			line, err = br.ReadSlice('\n')
			buf = append(buf, line...)
		}
		line = buf
	}
	switch {
	case len(line) > MaxLineBytes:
		return nil, errLong
	case err == io.EOF && len(line) == 0:
		return nil, io.EOF
	case err == io.EOF:
		return line, errTorn
	case err != nil:
		return nil, err
	}
	return line[:len(line)-1], nil
}
