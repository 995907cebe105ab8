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

## test: lint, then every test (what CI runs)
test: lint unit

unit:
	$(GO) test -count=1 ./...

## lint: gofmt, go vet, staticcheck
lint:
	./ci/lint.sh

## bench: every benchmark, with the figures they report
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

clean:
	rm -rf bin runs
