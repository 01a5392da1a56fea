#!/usr/bin/env bash
# `make run`: bring the local stack up, migrate, load the demo catalog when the
# database has none (or queue for embedding again the clips an earlier build's
# embedder made), create a demo account (its root key is printed once, when
# it is created, and kept in .stack/demo.json) and a dashboard user for it
# (demo@example.com, with a one-time link to choose its password), then run
# one API node and one worker in the foreground. Ctrl-C stops both cleanly.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
STACK_DIR="${BROLL_STACK_DIR:-$ROOT/.stack}"
BIN="$ROOT/bin"
cd "$ROOT"

bash deploy/local/stack.sh up >/dev/null
set -a
# shellcheck disable=SC1091
. "$STACK_DIR/env"
set +a

# Local secrets, made once per checkout and never committed.
if [ ! -s "$STACK_DIR/signing-key" ]; then
	head -c 48 /dev/urandom | base64 | tr -d '\n/+=' >"$STACK_DIR/signing-key"
	chmod 600 "$STACK_DIR/signing-key"
fi
if [ ! -s "$STACK_DIR/legacy-secret" ]; then
	head -c 32 /dev/urandom | base64 | tr -d '\n/+=' >"$STACK_DIR/legacy-secret"
	chmod 600 "$STACK_DIR/legacy-secret"
fi
export BROLL_SIGNING_KEY="${BROLL_SIGNING_KEY:-$(cat "$STACK_DIR/signing-key")}"
export BROLL_LEGACY_SECRET="${BROLL_LEGACY_SECRET:-$(cat "$STACK_DIR/legacy-secret")}"
export BROLL_MEDIA_DIR="${BROLL_MEDIA_DIR:-$STACK_DIR/media}"
export BROLL_IMPORT_DIR="${BROLL_IMPORT_DIR:-$STACK_DIR/import}"
mkdir -p "$BROLL_IMPORT_DIR"
export BROLL_HTTP_ADDR="${BROLL_HTTP_ADDR:-:8080}"

"$BIN/brollctl" migrate >/dev/null

total="$("$BIN/brollctl" clips status | sed -n 's/.*"total": *\([0-9]*\).*/\1/p')"
if [ "${total:-0}" = "0" ]; then
	echo "run: loading the demo catalog (200 clips)" >&2
	"$BIN/brollctl" seed-demo --count 200 >/dev/null
else
	# A catalog embedded by another model (an earlier build's built-in
	# embedder, or Ollama started or stopped since) is not searched by
	# meaning until it is embedded again: queue those clips, as an operator
	# does after changing the model (none when every vector is current).
	queued="$("$BIN/brollctl" clips reembed | sed -n 's/.*"queued": *\([0-9]*\).*/\1/p')"
	if [ "${queued:-0}" != "0" ]; then
		echo "run: embedding $queued clips again for this build's model" >&2
	fi
fi

if [ ! -s "$STACK_DIR/demo.json" ]; then
	umask 077
	"$BIN/brollctl" account create --name "Demo Platform" --source demo --credits 1000 >"$STACK_DIR/demo.json"
	key="$(sed -n 's/.*"root_key": *"\([^"]*\)".*/\1/p' "$STACK_DIR/demo.json")"
	cat >&2 <<-EOF

		Demo account created with \$1000.00 of credit. Its root key (shown once; also kept in .stack/demo.json):

		    $key

		Try:  curl -H "Authorization: Bearer $key" localhost:${BROLL_HTTP_ADDR##*:}/api/v1/broll?limit=3

	EOF
else
	echo "run: demo account exists; its root key is in .stack/demo.json" >&2
fi
# The demo account is a v0 customer, so the legacy routes answer for
# source=demo with the secret above (idempotent).
"$BIN/brollctl" legacy enable --source demo >/dev/null

# A dashboard user for the demo account, made once; the one-time link to
# choose its password is printed (a new one: brollctl user reset).
if [ ! -s "$STACK_DIR/demo-user.json" ]; then
	account="$(sed -n 's/.*"account_id": *"\([^"]*\)".*/\1/p' "$STACK_DIR/demo.json")"
	umask 077
	if "$BIN/brollctl" user create --account "$account" --email demo@example.com >"$STACK_DIR/demo-user.json" 2>/dev/null; then
		link="$(sed -n 's/.*"set_password_url": *"\([^"]*\)".*/\1/p' "$STACK_DIR/demo-user.json")"
		cat >&2 <<-EOF

			Dashboard user demo@example.com created. Choose its password (the link works once, for 24 hours):

			    $link

			then sign in at ${link%%/dashboard/*}/dashboard

		EOF
	else
		rm -f "$STACK_DIR/demo-user.json"
	fi
fi

pids=()
stop() {
	trap - INT TERM
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	wait
}
trap stop INT TERM

"$BIN/broll-api" &
pids+=($!)
"$BIN/broll-worker" &
pids+=($!)
echo "run: api on ${BROLL_HTTP_ADDR}, worker started; Ctrl-C stops both" >&2

# Either process exiting stops the other.
wait -n || true
stop
