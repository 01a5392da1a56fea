#!/usr/bin/env bash
# Runs golangci-lint at the version the project pins, building it once with the
# Go toolchain into the stack folder (like versitygw in stack.sh), so a fresh
# machine needs nothing but Go and nothing outside the checkout changes. The
# binary's name carries the version: a new pin builds a new binary.
#
#   deploy/local/golangci-lint.sh run ./...   (what `make lint-go` runs)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
STACK_DIR="${BROLL_STACK_DIR:-$ROOT/.stack}"
VERSION="${GOLANGCI_LINT_VERSION:-v2.15.0}"
BIN="$STACK_DIR/bin/golangci-lint-$VERSION"

if [ ! -x "$BIN" ]; then
	gobin="$(command -v go || echo /usr/local/go/bin/go)"
	[ -x "$gobin" ] || { echo "golangci-lint.sh: go is needed to build golangci-lint" >&2; exit 1; }
	echo "golangci-lint.sh: building golangci-lint $VERSION (once; a few minutes)" >&2
	tmp="$(mktemp -d)"
	trap 'rm -rf "$tmp"' EXIT
	GOBIN="$tmp" GOFLAGS=-mod=mod "$gobin" install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$VERSION" >/dev/null
	mkdir -p "$(dirname "$BIN")"
	mv "$tmp/golangci-lint" "$BIN"
fi

cd "$ROOT"
exec "$BIN" "$@"
