# chronosync — see README.md.
SHELL := /bin/bash
GO          ?= go
BIN         := bin/chronosync
SCENARIO    ?= scenarios/train4-kineto.yaml
export GOFLAGS ?= -mod=readonly
# The source revision, stamped into the binary for PhaseGap's records
# (phasegap/buildstamp) where the toolchain's own VCS stamp is off; empty
# when git or the repository is absent (the records then say "unknown").
GIT_SHA     := $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS     := -X github.com/chronosync/chronosync/phasegap/buildstamp.Revision=$(GIT_SHA)

.PHONY: all build build-mpi run deps test unit accept lint bench bench-smoke fuzz fuzz-smoke clean

all: build

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/chronosync

## build-mpi: chronosync with PhaseGap on MPI (needs libopenmpi-dev)
build-mpi:
	$(GO) build -tags mpi -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/chronosync

## run: run the default scenario and print its summary
run: build
	./$(BIN) run $(SCENARIO) --out runs/$(notdir $(basename $(SCENARIO)))

## deps: install the Debian packages the tests need, when missing and root
## (ci/deps.sh; without root what needs them is skipped)
deps:
	@./ci/deps.sh

# NEED PKG WHAT: true when the Debian package PKG is installed; else prints
# one SKIP line for WHAT (and, under make test, records it in SKIP_LOG).
NEED     := ./ci/deps.sh need
# The skips of one make test, printed at its end: Go tests record theirs
# through ci/needs, the targets below through NEED.
SKIP_LOG := $(CURDIR)/.cache/make-test-skips.txt

## test: the system packages (deps), lint, fresh generated code, every
## benchmark once, every test under the race detector, the acceptance runs
## (what CI runs); ends with the list of what was skipped
test: deps
	@mkdir -p '$(dir $(SKIP_LOG))' && : > '$(SKIP_LOG)'
	@CHRONOSYNC_SKIP_LOG='$(SKIP_LOG)' $(MAKE) --no-print-directory lint proto-check bench-smoke fuzz-smoke unit accept; \
	status=$$?; ./ci/deps.sh report '$(SKIP_LOG)'; exit $$status

# The packages that measure real-time behaviour (the shaper's delays, the
# reference daemons' accuracy) run after the others, one at a time, so that
# the parallel test binaries do not take the CPU they measure.
REALTIME_PKGS := ./real/shaper/ ./peers/
# The packages with cgo MPI code (-tags mpi): OpenMPI's libopenmpi-dev and
# openmpi-bin; their tests launch ranks with mpirun.
MPI_PKGS := ./mpi/ ./phasegap/... ./cmd/chronosync/

unit:
	$(GO) test -race -count=1 $$($(GO) list ./... | grep -v -e /real/shaper -e '/peers$$')
	if $(NEED) libhsa-runtime-dev 'go test -tags rocm ./real/rocm/'; then \
		$(GO) test -race -count=1 -tags rocm ./real/rocm/; fi
	if $(NEED) libopenmpi-dev 'go test -tags mpi $(MPI_PKGS) (PhaseGap on MPI)' && \
		$(NEED) pkgconf 'go test -tags mpi $(MPI_PKGS) (PhaseGap on MPI)' && \
		$(NEED) openmpi-bin 'go test -tags mpi $(MPI_PKGS) (PhaseGap on MPI)'; then \
		$(GO) test -race -count=1 -tags mpi ./mpi/ ./phasegap/... && \
		$(GO) test -count=1 -tags mpi -run 'TestPhasegap' ./cmd/chronosync/; fi
	$(GO) test -count=1 -p 1 $(REALTIME_PKGS)

## accept: the whole-scenario acceptance runs and property tests, and the
## step scan's statistical tests, which are built only without -race (files
## tagged !race); three go test processes at once (ci/accept.sh)
accept:
	GO=$(GO) ./ci/accept.sh

## soak: issue 31's soak, 10 minutes (SOAK=30s for less): a keyed 4-node
## cluster of `chronosync node` in network namespaces until SIGTERM, its
## metrics scraped every 5 s, a C reader on a node's time page the whole
## time, `chronosync status` (root; make test runs it for 30 s in unit;
## docs/node-service.md, "Soak test")
.PHONY: soak
SOAK ?= 10m
soak:
	CHRONOSYNC_SOAK=$(SOAK) $(GO) test -count=1 -timeout 20m -run '^TestNodeServiceSoak$$' -v ./cmd/chronosync/

## hta: HolisticTraceAnalysis's view of a traced run's per-rank Kineto
## copies (tools/hta/hta_report.py; not part of make test): temporal
## breakdown, comm/comp overlap, per-collective alignment. Needs an HTA
## checkout in HTA (the directory holding hta/) and Debian's python3-pandas,
## python3-plotly, python3-networkx, python3-psutil and python3-yaml; runs
## train4-kineto into HTA_RUN first when that has no Kineto copies.
## HTA_DIRS adds LABEL=DIR trace directories to compare with.
.PHONY: hta
HTA ?= /tmp/hta-src
HTA_RUN ?= runs/train4-kineto
PYTHON ?= /usr/bin/python3
hta: build
	test -d $(HTA_RUN)/combined-kineto.kineto || $(BIN) run scenarios/train4-kineto.yaml --out $(HTA_RUN)
	$(PYTHON) tools/hta/hta_report.py --hta $(HTA) $(HTA_DIRS) run=$(HTA_RUN)/combined-kineto.kineto

# Every benchmark runs once so that none rots, in -short mode (benchmarks
# whose full size takes minutes, such as BenchmarkCombine16x1M, shrink);
# figures come from `make bench`.
bench-smoke:
	$(GO) test -short -run '^$$' -bench . -benchtime 1x ./...

## fuzz: every native fuzz target, FUZZTIME each (default 30s), with a
## table of the executions (ci/fuzz.sh)
FUZZTIME ?= 30s
fuzz:
	./ci/fuzz.sh $(FUZZTIME)

# Every fuzz target a few seconds, so that none rots (make test).
fuzz-smoke:
	./ci/fuzz.sh 2s

## lint: gofmt, go vet, staticcheck (-tags rocm too, with libhsa-runtime-dev)
lint:
	./ci/lint.sh

## bench: every benchmark, with the figures they report
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

clean:
	rm -rf bin runs

# Protobuf. Each .proto of PROTO_SRC is generated into the .pb.go beside it
# (PROTO_GEN: rounds/syncpb/sync.pb.go, trace/xplanepb/xplane.pb.go,
# trace/snapshotpb/snapshot.pb.go) and committed, so building needs neither
# protoc nor the plugin. protoc-gen-go is pinned to the
# google.golang.org/protobuf version in go.mod and installed into ./bin
# (gitignored); protoc is the system one (Debian's protobuf-compiler).
.PHONY: proto proto-check protoc-gen-go

PROTOC           ?= protoc
PROTO_MODULE     := github.com/chronosync/chronosync
PROTO_SRC        := rounds/syncpb/sync.proto trace/xplanepb/xplane.proto trace/snapshotpb/snapshot.proto
PROTO_GEN        := $(PROTO_SRC:.proto=.pb.go)
PROTOC_GEN_GO    := bin/protoc-gen-go
PROTOBUF_VERSION = $(shell $(GO) list -m -f '{{.Version}}' google.golang.org/protobuf)
PROTOC_FLAGS     = --plugin=protoc-gen-go=$(PROTOC_GEN_GO) --go_opt=module=$(PROTO_MODULE)
PROTOC_NEEDED    = @command -v $(PROTOC) >/dev/null || { echo "$(PROTOC) not found: install it (Debian: apt-get install protobuf-compiler)" >&2; exit 1; }

# protoc-gen-go: (re)install bin/protoc-gen-go when missing or not at the version in go.mod
protoc-gen-go:
	@v='$(PROTOBUF_VERSION)'; \
	if [ -z "$$v" ]; then echo "protoc-gen-go: google.golang.org/protobuf is not in go.mod" >&2; exit 1; fi; \
	if [ "$$($(PROTOC_GEN_GO) --version 2>/dev/null)" != "protoc-gen-go $$v" ]; then \
		echo "installing protoc-gen-go $$v into bin/"; \
		GOBIN=$(CURDIR)/bin $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@$$v; \
	fi

## proto: regenerate every .pb.go of PROTO_GEN from its .proto
proto: protoc-gen-go
	$(PROTOC_NEEDED)
	$(PROTOC) $(PROTOC_FLAGS) --go_out=. $(PROTO_SRC)

## proto-check: fail if a committed .pb.go is not what `make proto` would write
# The generated header names the protoc version ("// 	protoc        v3.21.12");
# that line is ignored so that another protoc release does not fail the check.
# The protoc-gen-go version line is compared: it is pinned by go.mod.
# Skipped, and listed, without protobuf-compiler.
proto-check: protoc-gen-go
	@if ! $(NEED) protobuf-compiler 'make proto-check'; then exit 0; fi; \
	tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	$(PROTOC) $(PROTOC_FLAGS) --go_out="$$tmp" $(PROTO_SRC) || exit 1; \
	strip='/^\/\/[[:space:]]*protoc[[:space:]]/d'; \
	stale=0; \
	for src in $(PROTO_SRC); do \
		gen="$${src%.proto}.pb.go"; \
		if [ ! -f "$$gen" ]; then \
			echo "proto-check: $$gen is missing: run 'make proto' and commit the result" >&2; \
			stale=1; continue; \
		fi; \
		sed "$$strip" "$$gen" > "$$tmp/committed.go" || exit 1; \
		sed "$$strip" "$$tmp/$$gen" > "$$tmp/fresh.go" || exit 1; \
		if ! diff -u --label "$$gen (committed)" --label "$$gen (from $$src)" \
			"$$tmp/committed.go" "$$tmp/fresh.go"; then \
			echo "proto-check: $$gen is stale: run 'make proto' and commit the result" >&2; \
			stale=1; continue; \
		fi; \
		echo "proto-check: $$gen is up to date with $$src"; \
	done; \
	exit $$stale

## scale: issue 34's scale runs (bench/scale/*.yaml: the sync protocol, two
## rounds, 1s windows, on 256 and 1,024 nodes 8-regular and 64 in a full
## mesh), each under /usr/bin/time -v with --no-event-log --no-report: a
## row per run of nodes, events, CPU seconds (user + sys) and max RSS
## (minutes; not in make test)
## control: issue 34's control-plane overhead against N (bench/control_test.go):
## the sync protocol's master-controlled rounds at 8, 64, 512 and 4,096 nodes
## over 50 µs, 10 Gbit/s links and interfaces (links.nic); writes
## CONTROL_OUT/overhead.md (the table, fits in log2 N and in N) and
## overhead.png, and each run's directory. CONTROL_N=8,64 for fewer.
.PHONY: control
CONTROL_OUT ?= runs/control
CONTROL_N ?= 8,64,512,4096
control:
	mkdir -p $(CONTROL_OUT)
	CHRONOSYNC_CONTROL_OUT=$(abspath $(CONTROL_OUT)) CHRONOSYNC_CONTROL_N=$(CONTROL_N) $(GO) test -count=1 -timeout 60m -run '^TestControlOverhead$$' -v ./bench/

.PHONY: scale
SCALE_OUT ?= runs/scale
scale: build
	./bench/scale/run.sh ./$(BIN) $(SCALE_OUT)

## ns3-ratio: issue 34's target against ns-3 (bench/ns3/ratio.sh): mesh8-jitter's
## packet workload as a small ns-3 program (bench/ns3/mesh8.cc, built in a
## temporary directory) and chronosync with default outputs on one core, each
## under /usr/bin/time -v NS3_RUNS times; prints CPU per packet, max RSS and the
## ratios against the targets (≥ 10× ns-3 per packet, RSS ≤ 2× ns-3's). Needs
## libns3-dev, else says so and succeeds (minutes; not in make test)
.PHONY: ns3-ratio
NS3_RUNS ?= 1
ns3-ratio: build
	./bench/ns3/ratio.sh ./$(BIN) $(NS3_RUNS)

## issue29: the runs issue 29's closing note quotes: clock steps below 1 ms in
## traced 8-node runs, 3 wandering nodes of 10, heavy jitter with bursty loss
## on 24 nodes, and the self-check beside the truth for every library
## scenario that synchronises (minutes)
.PHONY: issue29
issue29: build
	@for s in testdata/issue29/*.yaml mesh8-jitter asym-queueing ring32-faults mesh8-consensus train4 train4-kineto real2-idle real2-onoff real4-jitter real8-faults; do \
		echo "== $$s"; ./$(BIN) run $$s --out runs/issue29/$$(basename $$s .yaml) 2>&1 | \
		grep -E 'exported|reported σ|self-check|per node|clock step|validate combined|aligned|unsolved|^status|  warning: (self|node)'; \
	done

## step-sensitivity: the sweep of the smallest clock step the sync protocol
## finds and the largest it misses, by the links' jitter (minutes; its
## table is in docs/sync-protocol.md)
.PHONY: step-sensitivity
step-sensitivity:
	CHRONOSYNC_SWEEP=1 $(GO) test -count=1 -run '^TestStepSensitivity$$' -v ./harness/ 2>&1 | grep -E '^\s+step_sensitivity|^(---|ok|FAIL)'

## figures: rerun the acceptance runs (TestAccept) and rewrite docs/figures.md,
## and the copies of its tables in README.md and docs/, from what they measure;
## make accept fails while any of them is stale
.PHONY: figures
figures:
	$(GO) test -count=1 -run '^TestAccept$$' ./harness/ -update

## report-shots: run mesh8-jitter, train4, a small PhaseGap sweep and (as
## root) real2-idle into $(SHOTS_RUNS), and take full-page screenshots of
## their report.html in headless chromium into $(SHOTS) (minutes; not in
## make test; needs the chromium package)
SHOTS      ?= runs/report-shots
SHOTS_RUNS ?= runs/report-shots/runs
.PHONY: report-shots
report-shots: build
	@mkdir -p $(SHOTS) $(SHOTS_RUNS)
	./$(BIN) run mesh8-jitter --out $(SHOTS_RUNS)/mesh8-jitter --no-event-log
	./$(BIN) run train4 --out $(SHOTS_RUNS)/train4 --no-event-log
	./$(BIN) phasegap sweep report/testdata/shots-sweep.yaml --out $(SHOTS_RUNS)/sweep
	./$(BIN) report $(SHOTS_RUNS)/sweep
	-./$(BIN) run real2-idle --backend=real --out $(SHOTS_RUNS)/real2-idle
	dirs="mesh8-jitter=$(abspath $(SHOTS_RUNS))/mesh8-jitter,train4=$(abspath $(SHOTS_RUNS))/train4,phasegap-sweep=$(abspath $(SHOTS_RUNS))/sweep"; \
	if [ -f $(SHOTS_RUNS)/real2-idle/summary.json ]; then dirs="$$dirs,real2-idle=$(abspath $(SHOTS_RUNS))/real2-idle"; fi; \
	CHRONOSYNC_REPORT_SHOTS="$$dirs" CHRONOSYNC_REPORT_SHOTS_OUT=$(abspath $(SHOTS)) \
		$(GO) test -count=1 -run '^TestScreenshots$$' -v ./report/
	@ls -l $(SHOTS)/*.png
