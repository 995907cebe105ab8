#!/usr/bin/env bash
# Lint gate used by `make lint` and so by `make test` and CI: gofmt must have
# nothing to say, go vet and staticcheck must be clean. staticcheck is
# installed at the pinned version when missing.
set -euo pipefail
cd "$(dirname "$0")/.."

STATICCHECK_VERSION=v0.8.2
GOBIN=$(go env GOPATH)/bin

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.git/*'))
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
# The ROCm tracer clock builds only with -tags rocm (cgo, libhsa-runtime-dev).
go vet -tags rocm ./real/rocm/
"$GOBIN/staticcheck" -tags rocm ./real/rocm/
echo "lint: gofmt, go vet and staticcheck are clean"
