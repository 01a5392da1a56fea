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
(cd clients/ts && npx --no-install openapi-typescript ../../api/openapi.json --default-non-nullable false -o "$tmp/schema.ts" >"$tmp/ts.log" 2>&1) ||
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

# Money must come back to the cent. A float32 holds 1234567.89 as
# 1234567.875: the Go client must have no float32 at all (money is a
# format: double schema, components/schemas/Money, and oapi-codegen.yaml maps
# every number to float64), and every money field of both clients must be
# the Money type (a 64-bit float in Go, a number in TypeScript).
if grep -n 'float32' clients/go/brollclient/client.gen.go >&2; then
	fail "the Go client decodes numbers as float32 (lines above); money loses cents"
fi
grep -q '^type Money = float64$' clients/go/brollclient/client.gen.go ||
	fail "the Go client has no Money = float64 type"
grep -qE '^ +Money: number;$' clients/ts/src/schema.ts ||
	fail "the TypeScript client has no Money: number schema"
money_fields='(price|price_paid|balance|total_charged|total_amount|expected_total|amount|available)'
if grep -nE "^\s+[A-Za-z]+ +\*?[A-Za-z0-9_]+ +\`json:\"$money_fields[,\"]" clients/go/brollclient/client.gen.go |
	grep -vE '[*]?Money +`' >&2; then
	fail "Go money fields (above) are not of type Money"
fi
if grep -nE "^ +$money_fields\??: " clients/ts/src/schema.ts | grep -v 'components\["schemas"\]\["Money"\]' >&2; then
	fail "TypeScript money fields (above) are not of type Money"
fi
