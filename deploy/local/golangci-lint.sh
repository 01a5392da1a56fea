#!/usr/bin/env bash
# Runs golangci-lint at the version the project pins, building it once with the
# Go toolchain into the stack folder (like versitygw in stack.sh), so a fresh
# machine needs nothing but Go and nothing outside the checkout changes. The
# version, and the checksum of every module it is built from, are pinned by
# the linter's own module, tools/golangci-lint (go.mod, go.sum): the build
# asks the network for nothing the module cache holds, so once the modules
# are downloaded (any earlier build, or `go mod download` there) it runs
# offline. The binary's name carries the version: a new pin builds a new one.
#
#   deploy/local/golangci-lint.sh run ./...   (what `make lint-go` runs)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
STACK_DIR="${BROLL_STACK_DIR:-$ROOT/.stack}"
TOOL_DIR="$ROOT/tools/golangci-lint"
PKG=github.com/golangci/golangci-lint/v2/cmd/golangci-lint
VERSION="$(awk '{ if ($1 == "require") { $1 = ""; $0 = $0 } } $1 == "github.com/golangci/golangci-lint/v2" { print $2 }' "$TOOL_DIR/go.mod")"
[ -n "$VERSION" ] || { echo "golangci-lint.sh: no version of golangci-lint in $TOOL_DIR/go.mod" >&2; exit 1; }
BIN="$STACK_DIR/bin/golangci-lint-$VERSION"

if [ ! -x "$BIN" ]; then
	gobin="$(command -v go || echo /usr/local/go/bin/go)"
	[ -x "$gobin" ] || { echo "golangci-lint.sh: go is needed to build golangci-lint" >&2; exit 1; }
	echo "golangci-lint.sh: building golangci-lint $VERSION (once; a few minutes)" >&2
	tmp="$(mktemp -d)"
	trap 'rm -rf "$tmp"' EXIT
	(cd "$TOOL_DIR" && GOFLAGS=-mod=readonly "$gobin" build -o "$tmp/golangci-lint" "$PKG")
	mkdir -p "$(dirname "$BIN")"
	mv "$tmp/golangci-lint" "$BIN"
fi

cd "$ROOT"
exec "$BIN" "$@"
