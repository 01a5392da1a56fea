#!/usr/bin/env bash
# Prints the packages whose tests need no outside service: no Postgres, no
# Redis, no S3 server, no ffmpeg and no browser. `make check` runs their tests
# as the fast lane of a first contribution; `make test` runs every package.
#
# A package needs a service when one of its test files reaches one: the test
# kit's database, Redis, S3 or video helpers, the billing and catalog test
# kits, a node, the stack's addresses or one of the outside programs (the
# licence certificate's tests need poppler's pdftotext and the fonts the
# stack installs).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

needs='testkit\.(DatabaseURL|RedisURL|NewDatabase|NewEmptyDatabase|NewPool|Redis|StartS3|RenderVideo)\b|billingtest\.|catalogtest\.|DATABASE_URL|REDIS_URL|ffmpeg|ffprobe|chromium|pdftotext|LoadFonts|stack\.sh|[Nn]ewNode\(|setup\(t'

go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}} {{.Dir}}{{end}}' ./... |
while read -r pkg dir; do
	[ -n "$pkg" ] || continue
	if ! grep -qE "$needs" "$dir"/*_test.go; then
		echo "$pkg"
	fi
done
