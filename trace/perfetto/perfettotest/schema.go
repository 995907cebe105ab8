// Package perfettotest decodes traces written by package perfetto with
// Perfetto's own protos (perfetto_trace.proto, kept verbatim as test data
// in ../testdata) and checks what a Perfetto trace must be for Perfetto's
// trace processor to import it whole. It is for tests: Schema compiles the
// proto with protoc, and skips the test when protoc is not installed.
package perfettotest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// Dir is the directory of Perfetto's protos (../testdata).
func Dir() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("perfettotest: cannot locate the source directory")
	}
	return filepath.Join(filepath.Dir(file), "..", "testdata"), nil
}

// Compile compiles the proto file name in dir with protoc (its imports
// resolved in dir) into a temporary directory of tb's and returns its
// files. It skips tb when protoc is not installed.
func Compile(tb testing.TB, dir, name string) *protoregistry.Files {
	tb.Helper()
	protoc, err := exec.LookPath("protoc")
	if err != nil {
		tb.Skip("protoc is not installed (Debian: apt-get install protobuf-compiler): Perfetto's protos cannot be compiled to decode the trace with")
	}
	out := filepath.Join(tb.TempDir(), "descriptors.pb")
	cmd := exec.Command(protoc, "-I", dir, "--include_imports", "--descriptor_set_out="+out, name)
	if b, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("protoc %s: %v\n%s", name, err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		tb.Fatalf("read the descriptors of %s: %v", name, err)
	}
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(b, &set); err != nil {
		tb.Fatalf("decode the descriptors of %s: %v", name, err)
	}
	files, err := protodesc.NewFiles(&set)
	if err != nil {
		tb.Fatalf("load the descriptors of %s: %v", name, err)
	}
	return files
}

// Schema returns Perfetto's Trace message, compiled from
// ../testdata/perfetto_trace.proto (Compile: it skips tb without protoc).
func Schema(tb testing.TB) protoreflect.MessageDescriptor {
	tb.Helper()
	dir, err := Dir()
	if err != nil {
		tb.Fatal(err)
	}
	return Message(tb, Compile(tb, dir, "perfetto_trace.proto"), "perfetto.protos.Trace")
}

// Message finds the message named name in files.
func Message(tb testing.TB, files *protoregistry.Files, name protoreflect.FullName) protoreflect.MessageDescriptor {
	tb.Helper()
	d, err := files.FindDescriptorByName(name)
	if err != nil {
		tb.Fatalf("find %s: %v", name, err)
	}
	md, ok := d.(protoreflect.MessageDescriptor)
	if !ok {
		tb.Fatalf("%s is not a message", name)
	}
	return md
}

// unknown returns the path of the first field of m (recursively) that
// the schema does not know, or "".
func unknown(m protoreflect.Message, path string) string {
	if len(m.GetUnknown()) > 0 {
		num, _, _ := protowireTag(m.GetUnknown())
		return fmt.Sprintf("%s: unknown field %d", path, num)
	}
	var bad string
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Kind() != protoreflect.MessageKind && fd.Kind() != protoreflect.GroupKind {
			return true
		}
		p := path + "." + string(fd.Name())
		switch {
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len() && bad == ""; i++ {
				bad = unknown(l.Get(i).Message(), fmt.Sprintf("%s[%d]", p, i))
			}
		case fd.IsMap():
		default:
			bad = unknown(v.Message(), p)
		}
		return bad == ""
	})
	return bad
}
