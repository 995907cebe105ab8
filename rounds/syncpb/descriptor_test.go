package syncpb_test

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/chronosync/chronosync/rounds/syncpb"
)

// field is one field as sync.proto declares it: "repeated" is folded into
// typ, and a field of a oneof names it.
type field struct {
	name   string
	number int
	typ    string // proto type as written: "int32", "repeated EdgeAlphaBeta", ...
	oneof  string
}

func (f field) String() string {
	s := fmt.Sprintf("%s %s = %d", f.typ, f.name, f.number)
	if f.oneof != "" {
		s += " (oneof " + f.oneof + ")"
	}
	return s
}

// schema pins the wire format: names, numbers and types of every field of
// every message, in declaration order. Changing a number or a type here is
// a wire-incompatible change; it must be deliberate.
var schema = []struct {
	message string
	fields  []field
}{
	{"EdgeAlphaBeta", []field{
		{"src_node_id", 1, "int32", ""},
		{"dst_node_id", 2, "int32", ""},
		{"alpha", 3, "double", ""},
		{"beta", 4, "double", ""},
		{"pairs_count", 5, "int32", ""},
		{"lost_count", 6, "int32", ""},
		{"sigma_ns", 7, "double", ""},
		{"alpha_sigma", 8, "double", ""},
		{"estimator", 9, "string", ""},
		{"insufficient", 10, "bool", ""},
		{"step_detected", 11, "bool", ""},
		// 12 (step_at_ns), 16 (step_after_ns) and 17 (pre_step) are
		// reserved: they held a window's last step alone.
		{"pure_pairs", 13, "int32", ""},
		{"sent_pairs", 14, "int32", ""},
		{"margin_ns", 15, "double", ""},
		{"asym_sigma_ns", 18, "double", ""},
		{"steps", 19, "repeated EdgeStep", ""},
		{"miss_sigma_ns", 20, "double", ""},
	}},
	{"EdgeStep", []field{
		{"after_ns", 1, "int64", ""},
		{"at_ns", 2, "int64", ""},
		{"size_ns", 3, "double", ""},
		{"before", 4, "EdgeFit", ""},
	}},
	{"EdgeFit", []field{
		{"alpha", 1, "double", ""},
		{"beta", 2, "double", ""},
		{"sigma_ns", 3, "double", ""},
		{"alpha_sigma", 4, "double", ""},
		{"pairs_count", 5, "int32", ""},
		{"asym_sigma_ns", 6, "double", ""},
		{"miss_sigma_ns", 7, "double", ""},
	}},
	{"NodeWindowData", []field{
		{"node_id", 1, "int32", ""},
		{"window_id", 2, "uint64", ""},
		{"round_id", 3, "uint64", ""},
		{"window_start_ns", 4, "int64", ""},
		{"window_end_ns", 5, "int64", ""},
		{"edges", 6, "repeated EdgeAlphaBeta", ""},
		{"incarnation", 7, "uint64", ""},
		{"miss_sigma_ns", 8, "double", ""},
	}},
	{"GlobalWindowData", []field{
		{"window_id", 1, "uint64", ""},
		{"round_id", 2, "uint64", ""},
		{"window_start_ns", 3, "int64", ""},
		{"window_end_ns", 4, "int64", ""},
		{"all_nodes", 5, "repeated NodeWindowData", ""},
		{"sequence_number", 6, "uint64", ""},
	}},
	{"Hello", []field{
		{"node_id", 1, "int32", ""},
		{"incarnation", 2, "uint64", ""},
		{"last_round_id", 3, "uint64", ""},
		{"features", 4, "uint64", ""},
	}},
	{"RoundStart", []field{
		{"round_id", 1, "uint64", ""},
		{"sequence_number", 2, "uint64", ""},
		{"window_ns", 3, "int64", ""},
		{"cadence_ns", 4, "int64", ""},
	}},
	{"RoundEnd", []field{
		{"round_id", 1, "uint64", ""},
		{"sequence_number", 2, "uint64", ""},
	}},
	{"Heartbeat", []field{
		{"seq", 1, "uint64", ""},
		{"sent_ns", 2, "int64", ""},
	}},
	{"RoundResult", []field{
		{"round_id", 1, "uint64", ""},
		{"sequence_number", 2, "uint64", ""},
		{"reference_node", 3, "int32", ""},
		{"node_id", 4, "int32", ""},
		{"window_id", 5, "uint64", ""},
		{"window_start_ns", 6, "int64", ""},
		{"window_end_ns", 7, "int64", ""},
		{"offset_ns", 8, "double", ""},
		{"drift_ppm", 9, "double", ""},
		{"uncertainty_ns", 10, "double", ""},
		{"drift_uncertainty_ppm", 11, "double", ""},
		{"steps", 12, "repeated ResultStep", ""},
		{"self_check", 13, "ResultSelfCheck", ""},
		{"degraded", 14, "uint32", ""},
		{"sequence_skew_ns", 15, "int64", ""},
	}},
	{"ResultStep", []field{
		{"at_ns", 1, "int64", ""},
		{"at_uncertainty_ns", 2, "double", ""},
		{"size_ns", 3, "double", ""},
		{"size_uncertainty_ns", 4, "double", ""},
	}},
	{"ResultSelfCheck", []field{
		{"predictions", 1, "int32", ""},
		{"within_three_sigma", 2, "int32", ""},
		{"max_sigma", 3, "double", ""},
	}},
	{"Envelope", []field{
		{"hello", 1, "Hello", "body"},
		{"round_start", 2, "RoundStart", "body"},
		{"round_end", 3, "RoundEnd", "body"},
		{"window", 4, "NodeWindowData", "body"},
		{"heartbeat", 5, "Heartbeat", "body"},
		{"global", 6, "GlobalWindowData", "body"},
		{"round_result", 7, "RoundResult", "body"},
	}},
}

const protoPackage = "chronosync.sync.v1"

// fieldsOf reads a message's fields from a compiled descriptor.
func fieldsOf(md protoreflect.MessageDescriptor) []field {
	var out []field
	fds := md.Fields()
	for i := range fds.Len() {
		fd := fds.Get(i)
		typ := fd.Kind().String()
		if fd.Kind() == protoreflect.MessageKind {
			if fd.Message().ParentFile().Package() == protoPackage {
				typ = string(fd.Message().Name())
			} else {
				typ = string(fd.Message().FullName())
			}
		}
		if fd.Cardinality() == protoreflect.Repeated {
			typ = "repeated " + typ
		}
		f := field{name: string(fd.Name()), number: int(fd.Number()), typ: typ}
		if od := fd.ContainingOneof(); od != nil && !od.IsSynthetic() {
			f.oneof = string(od.Name())
		}
		out = append(out, f)
	}
	return out
}

// TestDescriptorMatchesSchema checks the descriptor embedded in the
// committed sync.pb.go against the pinned schema.
func TestDescriptorMatchesSchema(t *testing.T) {
	fd := syncpb.File_rounds_syncpb_sync_proto
	if got := string(fd.Package()); got != protoPackage {
		t.Errorf("package = %q, want %q", got, protoPackage)
	}
	if got := fd.Syntax(); got != protoreflect.Proto3 {
		t.Errorf("syntax = %v, want proto3", got)
	}
	opts, _ := fd.Options().(*descriptorpb.FileOptions)
	if got, want := opts.GetGoPackage(), "github.com/chronosync/chronosync/rounds/syncpb"; got != want {
		t.Errorf("go_package = %q, want %q", got, want)
	}

	msgs := fd.Messages()
	var names []string
	for i := range msgs.Len() {
		names = append(names, string(msgs.Get(i).Name()))
	}
	var want []string
	for _, m := range schema {
		want = append(want, m.message)
	}
	if !slices.Equal(names, want) {
		t.Errorf("messages = %v, want %v", names, want)
	}

	for _, m := range schema {
		md := msgs.ByName(protoreflect.Name(m.message))
		if md == nil {
			continue // reported above
		}
		if got := fieldsOf(md); !slices.Equal(got, m.fields) {
			t.Errorf("%s fields differ from the schema:\n got  %v\n want %v", m.message, got, m.fields)
		}
	}
}

// TestDescriptorMatchesProtoFile parses sync.proto (enough of it: messages,
// oneofs and fields) and checks that the committed generated code was
// generated from it, without needing protoc. `make proto-check` compares
// the whole generated file; this catches the common drift, an edited
// .proto whose sync.pb.go was not regenerated, in plain `go test`.
func TestDescriptorMatchesProtoFile(t *testing.T) {
	src, err := os.ReadFile("sync.proto")
	if err != nil {
		t.Fatal(err)
	}
	parsed, pkg, err := parseProto(string(src))
	if err != nil {
		t.Fatalf("sync.proto: %v", err)
	}
	fd := syncpb.File_rounds_syncpb_sync_proto
	if string(fd.Package()) != pkg {
		t.Errorf("sync.proto declares package %q, generated code has %q: run `make proto`", pkg, fd.Package())
	}
	msgs := fd.Messages()
	if msgs.Len() != len(parsed) {
		t.Errorf("sync.proto declares %d messages, generated code has %d: run `make proto`", len(parsed), msgs.Len())
	}
	for _, m := range parsed {
		md := msgs.ByName(protoreflect.Name(m.message))
		if md == nil {
			t.Errorf("message %s is in sync.proto but not in the generated code: run `make proto`", m.message)
			continue
		}
		if got := fieldsOf(md); !slices.Equal(got, m.fields) {
			t.Errorf("%s: generated code does not match sync.proto: run `make proto`\n generated  %v\n sync.proto %v", m.message, got, m.fields)
		}
	}
}

// TestSchemaMatchesProtoFile keeps the pinned schema and sync.proto in
// step, so that a change to the .proto must also change the table above.
func TestSchemaMatchesProtoFile(t *testing.T) {
	src, err := os.ReadFile("sync.proto")
	if err != nil {
		t.Fatal(err)
	}
	parsed, _, err := parseProto(string(src))
	if err != nil {
		t.Fatalf("sync.proto: %v", err)
	}
	if len(parsed) != len(schema) {
		t.Fatalf("sync.proto declares %d messages, the schema table %d", len(parsed), len(schema))
	}
	for i, m := range parsed {
		if m.message != schema[i].message || !slices.Equal(m.fields, schema[i].fields) {
			t.Errorf("sync.proto message %d differs from the schema table:\n proto %s %v\n table %s %v",
				i, m.message, m.fields, schema[i].message, schema[i].fields)
		}
	}
}

type parsedMessage struct {
	message string
	fields  []field
}

var (
	lineComment  = regexp.MustCompile(`//[^\n]*`)
	blockComment = regexp.MustCompile(`(?s)/\*.*?\*/`)
	tokenRE      = regexp.MustCompile(`"[^"]*"|[A-Za-z_][A-Za-z0-9_.]*|[0-9]+|[{}=;,]`)
)

// parseProto understands the subset of proto3 that sync.proto uses:
// syntax, package, option, top-level messages with scalar, message and
// repeated fields, oneofs and reserved numbers and names (which are
// skipped: the generated code has no trace of them). Anything else is an
// error, so that the test cannot pass by skipping what it does not
// understand.
func parseProto(src string) ([]parsedMessage, string, error) {
	src = blockComment.ReplaceAllString(src, " ")
	src = lineComment.ReplaceAllString(src, " ")
	toks := tokenRE.FindAllString(src, -1)
	if rest := strings.Join(strings.Fields(tokenRE.ReplaceAllString(src, " ")), ""); rest != "" {
		return nil, "", fmt.Errorf("unexpected characters %q", rest)
	}
	var (
		out   []parsedMessage
		pkg   string
		i     int
		depth int // 0 top level, 1 in a message, 2 in a oneof
		oneof string
	)
	next := func() string {
		if i >= len(toks) {
			return ""
		}
		i++
		return toks[i-1]
	}
	expect := func(want string) error {
		if got := next(); got != want {
			return fmt.Errorf("token %d: got %q, want %q", i, got, want)
		}
		return nil
	}
	for i < len(toks) {
		tok := next()
		switch {
		case depth == 0 && (tok == "syntax" || tok == "option"):
			for tok != ";" && tok != "" {
				tok = next()
			}
		case depth == 0 && tok == "package":
			pkg = next()
			if err := expect(";"); err != nil {
				return nil, "", err
			}
		case depth == 0 && tok == "message":
			out = append(out, parsedMessage{message: next()})
			if err := expect("{"); err != nil {
				return nil, "", err
			}
			depth = 1
		case depth == 1 && tok == "reserved":
			for tok != ";" && tok != "" {
				tok = next()
			}
		case depth == 1 && tok == "oneof":
			oneof = next()
			if err := expect("{"); err != nil {
				return nil, "", err
			}
			depth = 2
		case depth > 0 && tok == "}":
			depth--
			oneof = ""
		case depth > 0:
			typ := tok
			if tok == "repeated" {
				if depth == 2 {
					return nil, "", fmt.Errorf("repeated field in oneof %s", oneof)
				}
				typ += " " + next()
			}
			name := next()
			if err := expect("="); err != nil {
				return nil, "", err
			}
			num, err := strconv.Atoi(next())
			if err != nil {
				return nil, "", fmt.Errorf("field %s: %v", name, err)
			}
			if err := expect(";"); err != nil {
				return nil, "", err
			}
			m := &out[len(out)-1]
			m.fields = append(m.fields, field{name: name, number: num, typ: typ, oneof: oneof})
		default:
			return nil, "", fmt.Errorf("token %d: unexpected %q", i, tok)
		}
	}
	if depth != 0 {
		return nil, "", fmt.Errorf("unbalanced braces")
	}
	return out, pkg, nil
}
