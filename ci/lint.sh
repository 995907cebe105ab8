#!/usr/bin/env bash
# Lint gate used by `make lint` and so by `make test` and CI: gofmt must have
# nothing to say, go vet and staticcheck must be clean. staticcheck is
# installed at the pinned version when missing. The cgo code of -tags rocm
# is linted where libhsa-runtime-dev is installed, and skipped (and listed
# by make test) where not: see ci/deps.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

STATICCHECK_VERSION=v0.8.2
GOBIN=$(go env GOPATH)/bin

# The tracked files (outside a git checkout: every .go file but .git's).
mapfile -t gofiles < <(git ls-files '*.go' 2>/dev/null)
if ((${#gofiles[@]} == 0)); then
	mapfile -t gofiles < <(find . -name '*.go' -not -path './.git/*')
fi
unformatted=$(gofmt -l "${gofiles[@]}")
if [ -n "$unformatted" ]; then
	echo "gofmt would change:" >&2
	echo "$unformatted" >&2
	exit 1
fi

go vet ./...

if ! "$GOBIN/staticcheck" -version 2>/dev/null | grep -q "(${STATICCHECK_VERSION#v})"; then
	echo "installing staticcheck $STATICCHECK_VERSION" >&2
	go install "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION"
fi
"$GOBIN/staticcheck" ./...
# The ROCm tracer clock builds only with -tags rocm (cgo: hsa/hsa.h and
# libhsa-runtime64, from libhsa-runtime-dev).
if ci/deps.sh need libhsa-runtime-dev "lint of -tags rocm (go vet, staticcheck ./real/rocm/)"; then
	go vet -tags rocm ./real/rocm/
	"$GOBIN/staticcheck" -tags rocm ./real/rocm/
fi
# The MPI binding and PhaseGap's launcher build only with -tags mpi (cgo:
# mpi.h and libmpi, from libopenmpi-dev).
mpilint="lint of -tags mpi (go vet, staticcheck ./mpi/ ./phasegap/... ./cmd/chronosync/)"
if ci/deps.sh need libopenmpi-dev "$mpilint" && ci/deps.sh need pkgconf "$mpilint"; then
	go vet -tags mpi ./mpi/ ./phasegap/... ./cmd/chronosync/
	"$GOBIN/staticcheck" -tags mpi ./mpi/ ./phasegap/... ./cmd/chronosync/
fi
echo "lint: gofmt, go vet and staticcheck are clean"
