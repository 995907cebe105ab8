package xspace

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"

	"github.com/google/renameio/v2"
	"google.golang.org/protobuf/proto"
)

// filePerm is the permission of the files written, before the umask.
const filePerm = 0o644

// Write writes m to path, atomically as [WriteFile] does. The encoding is
// deterministic (map entries sorted by key), so the same message gives the
// same bytes.
func Write(path string, m proto.Message) error {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return fmt.Errorf("write %s: marshal %s: %w", path, m.ProtoReflect().Descriptor().FullName(), err)
	}
	return WriteFile(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// WriteFile creates or replaces the file at path with what write writes to
// its (buffered) writer, atomically: the data goes to a temporary file in
// path's directory, which is synced and then renamed to path. On any error,
// write's included, the temporary file is removed and path is left as it
// was: absent if it did not exist, the old file otherwise. The file's
// permissions are 0644 less the umask.
func WriteFile(path string, write func(io.Writer) error) (err error) {
	pf, err := renameio.NewPendingFile(path, renameio.WithTempDir(filepath.Dir(path)), renameio.WithPermissions(filePerm))
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if cerr := pf.Cleanup(); cerr != nil && err == nil {
			err = fmt.Errorf("write %s: remove temporary file: %w", path, cerr)
		}
	}()
	bw := bufio.NewWriterSize(pf, 1<<16)
	if err := write(bw); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := pf.CloseAtomicallyReplace(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
