#!/usr/bin/env bash
# Regenerates both clients from api/openapi.json into a temporary folder and
# fails if the committed code differs (run by `make clients-check`, part of
# `make test`). Each step says what failed: a generator that could not be
# fetched is not the same news as a client that is out of date.
set -uo pipefail
cd "$(dirname "$0")/.."
: "${OAPI_CODEGEN:?set by the Makefile}"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

fail() { echo "clients-check: $*" >&2; exit 1; }

sed "s#^output: .*#output: $tmp/client.gen.go#" clients/go/oapi-codegen.yaml >"$tmp/oapi-codegen.yaml"
$OAPI_CODEGEN -config "$tmp/oapi-codegen.yaml" api/openapi.json ||
	fail "oapi-codegen could not generate the Go client (output above)"

# npm ci reaches the registry; one failed download is retried before the
# check gives up, and npm's own error is shown either way.
ok=
for attempt in 1 2 3; do
	if (cd clients/ts && npm ci --no-audit --no-fund --loglevel=error); then ok=1; break; fi
	echo "clients-check: npm ci failed (attempt $attempt of 3)" >&2
	sleep $((attempt * 5))
done
[ -n "$ok" ] || fail "could not install the TypeScript generator (npm ci, output above)"
(cd clients/ts && npx --no-install openapi-typescript ../../api/openapi.json -o "$tmp/schema.ts" >"$tmp/ts.log" 2>&1) ||
	{ cat "$tmp/ts.log" >&2; fail "openapi-typescript could not generate the TypeScript client"; }

stale=
for pair in "clients/go/brollclient/client.gen.go $tmp/client.gen.go" "clients/ts/src/schema.ts $tmp/schema.ts"; do
	set -- $pair
	if ! diff -u "$1" "$2" >"$tmp/diff" 2>&1; then
		stale=1
		echo "clients-check: $1 differs from what api/openapi.json generates:" >&2
		head -40 "$tmp/diff" >&2
	fi
done
[ -z "$stale" ] || fail "the generated clients are out of date with api/openapi.json; run make clients and commit"
