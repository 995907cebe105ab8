package combine

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/infile"
)

// readOffsets reads an offsets file: GraphCalc's offsets.jsonl (a meta line,
// then one record per node and window), or the legacy midpoint form (no meta
// line; one record per node and window with the node's clock reading at the
// window's midpoint, see legacyRecord). It returns the run id ("" for the
// legacy form) and the records, as windows of offsets.Offset.
func readOffsets(path string) (runID string, offs []offsets.Offset, err error) {
	legacy, err := isLegacy(path)
	if err != nil {
		return "", nil, err
	}
	if !legacy {
		info, offs, err := offsets.ReadStrict(path) // as calibrate and estimate read it
		if err != nil {
			return "", nil, err
		}
		return info.Meta.RunID, offs, nil
	}
	windows, err := offsets.ReadLegacy(path)
	if err != nil {
		return "", nil, err
	}
	return "", windows, nil
}

// isLegacy reports whether the file's first non-empty line is not a meta
// record.
func isLegacy(path string) (bool, error) {
	f, err := infile.Open(path, infile.Offsets)
	if err != nil {
		return false, fmt.Errorf("read offsets: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), offsets.MaxLineBytes)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var head struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(line, &head); err != nil {
			return false, fmt.Errorf("%s:%d: not a JSON object: %v", path, n, err)
		}
		return head.Type != "meta", nil
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return false, fmt.Errorf("%s:%d: line longer than %s (offsets.MaxLineBytes)", path, n+1, infile.Bytes(offsets.MaxLineBytes))
	} else if err != nil {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	return false, fmt.Errorf("%s: empty offsets file", path)
}
