# chronosync — see README.md.
GO          ?= go
BIN         := bin/chronosync
SCENARIO    ?= scenarios/quickstart.yaml
export GOFLAGS ?= -mod=readonly

.PHONY: all build run test unit lint bench bench-smoke clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/chronosync

## run: run the default scenario and print its summary
run: build
	./$(BIN) run $(SCENARIO) --out runs/$(notdir $(basename $(SCENARIO)))

## test: lint, every test under the race detector, every benchmark once (what CI runs)
test: lint bench-smoke unit

unit:
	$(GO) test -race -count=1 ./...

# Every benchmark runs once so that none rots; figures come from `make bench`.
bench-smoke:
	$(GO) test -run '^$$' -bench . -benchtime 1x ./...

## lint: gofmt, go vet, staticcheck
lint:
	./ci/lint.sh

## bench: every benchmark, with the figures they report
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

clean:
	rm -rf bin runs
