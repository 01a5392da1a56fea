#!/usr/bin/env bash
# Local stack for machines without Docker: the project's own PostgreSQL
# cluster (with pgvector) and Redis server, under a project-local data folder
# on non-default ports. Nothing of the machine's own services is touched.
#
#   deploy/local/stack.sh up      install what is missing, start both, write the env file
#   deploy/local/stack.sh down    stop both (data is kept)
#   deploy/local/stack.sh restart-postgres  restart Postgres alone (deploy/bench/warm)
#   deploy/local/stack.sh status  say what runs
#   deploy/local/stack.sh env     print the env file (DATABASE_URL, REDIS_URL)
#   deploy/local/stack.sh destroy stop both and delete the data folder
#   deploy/local/stack.sh gc-test-dbs  drop databases left by killed test runs
#
# Every step is idempotent: a second `up` only checks and returns in about a second.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
STACK_DIR="${BROLL_STACK_DIR:-$ROOT/.stack}"
PORTS_FILE="$STACK_DIR/ports"
PG_PORT="${BROLL_PG_PORT:-55432}"
REDIS_PORT="${BROLL_REDIS_PORT:-56379}"
# Ports chosen on the first `up` are kept, so that later calls find the same
# instances (and a stack of another checkout on the default ports is not ours).
if [ -f "$PORTS_FILE" ]; then
	# shellcheck disable=SC1090
	. "$PORTS_FILE"
fi
PGVECTOR_VERSION="${BROLL_PGVECTOR_VERSION:-0.8.0}"
PG_USER_OS="postgres"
DB_NAME="broll"
DB_ROLE="broll"
ENV_FILE="$STACK_DIR/env"

log() { printf 'stack: %s\n' "$*" >&2; }
die() { printf 'stack: error: %s\n' "$*" >&2; exit 1; }

as_root() {
	if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

apt_updated=0
apt_install() {
	if [ "$apt_updated" -eq 0 ]; then
		log "apt-get update"
		as_root apt-get update -qq >/dev/null
		apt_updated=1
	fi
	log "installing $*"
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

pg_bindir() {
	local d
	d="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1 || true)"
	if [ -n "$d" ] && [ -x "$d/postgres" ]; then echo "$d"; fi
}

ensure_packages() {
	local need=()
	[ -n "$(pg_bindir)" ] || need+=(postgresql)
	command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
	command -v redis-cli >/dev/null 2>&1 || need+=(redis-tools)
	if [ "${#need[@]}" -gt 0 ]; then apt_install "${need[@]}"; fi
	[ -n "$(pg_bindir)" ] || die "no PostgreSQL server found after install"
	ensure_pgvector
	ensure_media_tools
	ensure_certificate_fonts
	ensure_ollama
	ensure_promtool
	ensure_jaeger
}

# Jaeger: the tracing backend the cluster tests send spans to over OTLP
# (deploy/cluster/jaeger_test.go), v2, built from its Go module at the
# version tools/jaeger/go.mod pins (every dependency's checksum in its
# go.sum, apart from the service's modules) into the stack folder: about
# fifteen minutes on two cores the first time, seconds with a warm build
# cache. The module build serves the query API but not the web UI, whose
# assets are built with npm from the jaeger-ui repository.
JAEGER_TOOL_DIR="$ROOT/tools/jaeger"
jaeger_version() {
	awk '{ if ($1 == "require") { $1 = ""; $0 = $0 } } $1 == "github.com/jaegertracing/jaeger" { print $2 }' "$JAEGER_TOOL_DIR/go.mod"
}
jaeger_bin() { echo "$STACK_DIR/bin/jaeger-$(jaeger_version)"; }

ensure_jaeger() {
	local bin version gobin tmp
	version="$(jaeger_version)"
	[ -n "$version" ] || die "tools/jaeger/go.mod pins no github.com/jaegertracing/jaeger"
	bin="$(jaeger_bin)"
	[ -x "$bin" ] && return 0
	gobin="$(command -v go || echo /usr/local/go/bin/go)"
	[ -x "$gobin" ] || die "go is needed to build jaeger"
	log "building jaeger $version (once; about fifteen minutes)"
	mkdir -p "$(dirname "$bin")"
	tmp="$(mktemp -d)"
	(cd "$JAEGER_TOOL_DIR" && GOFLAGS=-mod=readonly "$gobin" build -o "$tmp/jaeger" github.com/jaegertracing/jaeger/cmd/jaeger) ||
		{ rm -rf "$tmp"; die "jaeger build failed"; }
	mv "$tmp/jaeger" "$bin"
	rm -rf "$tmp"
}

# The licence certificate's fonts (billing/license/fonts.go reads them from
# BROLL_CERTIFICATE_FONT_DIR, default /usr/share/fonts/truetype): Noto for
# the alphabets, Indic and South-East Asian scripts, Arabic and Hebrew,
# Nanum Gothic for Korean, Droid Sans Fallback for Chinese and Japanese.
ensure_certificate_fonts() {
	local dir=/usr/share/fonts/truetype need=()
	[ -f "$dir/noto/NotoSansArabic-Regular.ttf" ] && [ -f "$dir/noto/NotoSans-Bold.ttf" ] || need+=(fonts-noto-core)
	[ -f "$dir/nanum/NanumGothic.ttf" ] || need+=(fonts-nanum)
	[ -f "$dir/droid/DroidSansFallbackFull.ttf" ] || need+=(fonts-droid-fallback)
	if [ "${#need[@]}" -gt 0 ]; then apt_install "${need[@]}"; fi
}

# Media tools: ffmpeg/ffprobe from the distribution (the worker probes clips
# and makes previews with them) and versitygw, the S3-compatible server the
# tests start for the s3 media store. versitygw is built with the Go
# toolchain into the stack folder, so nothing outside the checkout changes.
VERSITYGW_VERSION="${BROLL_VERSITYGW_VERSION:-v1.8.0}"
versitygw_bin() { echo "$STACK_DIR/bin/versitygw"; }

ensure_media_tools() {
	if ! command -v ffmpeg >/dev/null 2>&1 || ! command -v ffprobe >/dev/null 2>&1; then
		apt_install ffmpeg
	fi
	command -v ffprobe >/dev/null 2>&1 || die "no ffprobe found after installing ffmpeg"
	# poppler-utils: the licence tests read the PDF certificates back
	# (pdftotext) and docs-screenshots renders one (pdftoppm).
	if ! command -v pdftotext >/dev/null 2>&1 || ! command -v pdftoppm >/dev/null 2>&1; then
		apt_install poppler-utils
	fi
	local bin
	bin="$(versitygw_bin)"
	if [ ! -x "$bin" ]; then
		local gobin
		gobin="$(command -v go || echo /usr/local/go/bin/go)"
		[ -x "$gobin" ] || die "go is needed to build versitygw"
		log "building versitygw $VERSITYGW_VERSION (once; a few minutes)"
		mkdir -p "$(dirname "$bin")"
		GOBIN="$(dirname "$bin")" GOFLAGS=-mod=mod "$gobin" install "github.com/versity/versitygw/cmd/versitygw@$VERSITYGW_VERSION" >/dev/null
	fi
	[ -x "$bin" ] || die "versitygw build failed"
}

# promtool: deploy/monitoring_test.go checks and unit-tests the alerting
# rules (deploy/monitoring/alerts.yml) with Prometheus' own tool, built from
# its Go module at a pinned version into the stack folder (the module's
# v0.3XX.Y is Prometheus 3.XX.Y). A cold build takes about 7 minutes of CPU
# (22 minutes on two cores shared with other builds); `go version -m` tells
# a stale binary.
PROMTOOL_VERSION="${BROLL_PROMTOOL_VERSION:-v0.316.0}"
promtool_bin() { echo "$STACK_DIR/bin/promtool"; }

ensure_promtool() {
	local bin gobin
	bin="$(promtool_bin)"
	gobin="$(command -v go || echo /usr/local/go/bin/go)"
	[ -x "$gobin" ] || die "go is needed to build promtool"
	# A `go install` build carries no version of its own (`--version` is
	# blank); the module version is in its build information.
	if [ -x "$bin" ] && "$gobin" version -m "$bin" 2>/dev/null |
		awk -v v="$PROMTOOL_VERSION" '$1 == "mod" && $2 == "github.com/prometheus/prometheus" && $3 == v { ok = 1 } END { exit !ok }'; then
		return
	fi
	log "building promtool $PROMTOOL_VERSION (once; several minutes)"
	mkdir -p "$(dirname "$bin")"
	GOBIN="$(dirname "$bin")" GOFLAGS=-mod=mod "$gobin" install "github.com/prometheus/prometheus/cmd/promtool@$PROMTOOL_VERSION" >/dev/null
	[ -x "$bin" ] || die "promtool build failed"
}

# Ollama: the cluster tests run a real `ollama serve` (deploy/cluster,
# embed/ollamatest), built CPU-only from the Go module at the version go.mod
# pins, once into the stack folder. The module zip leaves out two of
# llama.cpp's vendored header sets: nlohmann/json and stb come from Debian,
# miniaudio.h from the Go module github.com/gen2brain/malgo (which ships
# it), put in an include folder under the user's cache (one path for every
# checkout, so that Go's build cache serves them all). A cold build takes
# four to five minutes on two cores (about 20 s with a warm Go build
# cache); `ollama -v` tells a stale binary.
OLLAMA_MINIAUDIO_MODULE="github.com/gen2brain/malgo@v0.11.24"
ollama_bin() { echo "$STACK_DIR/bin/ollama"; }

ollama_version() {
	awk '$1 == "github.com/ollama/ollama" { sub(/^v/, "", $2); print $2 }' "$ROOT/go.mod"
}

ensure_ollama() {
	local bin version
	bin="$(ollama_bin)"
	version="$(ollama_version)"
	[ -n "$version" ] || die "go.mod pins no github.com/ollama/ollama"
	# OLLAMA_HOST on a port where nothing listens: `-v` then prints the
	# binary's own version, not that of a server running on the machine.
	if [ -x "$bin" ] && OLLAMA_HOST=127.0.0.1:1 "$bin" -v 2>&1 | grep -q "client version is $version\$"; then
		return
	fi
	local need=()
	[ -f /usr/include/nlohmann/json_fwd.hpp ] || need+=(nlohmann-json3-dev)
	[ -f /usr/include/stb/stb_image.h ] || need+=(libstb-dev)
	command -v g++ >/dev/null 2>&1 || need+=(g++)
	if [ "${#need[@]}" -gt 0 ]; then apt_install "${need[@]}"; fi
	local gobin inc malgo
	gobin="$(command -v go || echo /usr/local/go/bin/go)"
	[ -x "$gobin" ] || die "go is needed to build ollama"
	inc="${XDG_CACHE_HOME:-$HOME/.cache}/broll/ollama-include"
	if [ ! -f "$inc/miniaudio/miniaudio.h" ]; then
		malgo="$(cd "$ROOT" && GOFLAGS=-mod=mod "$gobin" mod download -json "$OLLAMA_MINIAUDIO_MODULE" |
			awk -F'"' '$2 == "Dir" { print $4 }')"
		[ -f "$malgo/miniaudio.h" ] || die "miniaudio.h not found in $OLLAMA_MINIAUDIO_MODULE"
		mkdir -p "$inc/miniaudio"
		cp "$malgo/miniaudio.h" "$inc/miniaudio/miniaudio.h"
	fi
	log "building ollama $version, CPU only (once; four to five minutes)"
	mkdir -p "$(dirname "$bin")"
	(cd "$ROOT" && GOBIN="$(dirname "$bin")" GOFLAGS=-mod=mod CGO_ENABLED=1 \
		CGO_CFLAGS="-O2 -g -I$inc" CGO_CPPFLAGS="-I$inc" CGO_CXXFLAGS="-O2 -g -I$inc" \
		"$gobin" install -ldflags "-X github.com/ollama/ollama/version.Version=$version" \
		"github.com/ollama/ollama@v$version" >/dev/null)
	[ -x "$bin" ] || die "ollama build failed"
}

# pgvector: Debian 12 has no binary package, so build it from Debian's source
# package (trixie suite) against the installed server. The apt source list used
# for that is project-local and never added to the machine's own lists.
ensure_pgvector() {
	local bindir pgconfig major sharedir
	bindir="$(pg_bindir)"
	major="$(basename "$(dirname "$bindir")")"
	pgconfig="$bindir/pg_config"
	if [ ! -x "$pgconfig" ]; then
		apt_install "postgresql-server-dev-$major"
	fi
	sharedir="$("$pgconfig" --sharedir)"
	if [ -f "$sharedir/extension/vector.control" ]; then return; fi

	if apt-cache show "postgresql-$major-pgvector" >/dev/null 2>&1; then
		apt_install "postgresql-$major-pgvector"
		[ -f "$sharedir/extension/vector.control" ] && return
	fi

	command -v make >/dev/null 2>&1 || apt_install make
	command -v gcc >/dev/null 2>&1 || apt_install gcc
	[ -f "/usr/include/postgresql/$major/server/postgres.h" ] || apt_install "postgresql-server-dev-$major"

	local build="$STACK_DIR/build/pgvector"
	local src="$build/pgvector-$PGVECTOR_VERSION"
	mkdir -p "$build/lists/partial"
	if [ ! -d "$src" ]; then
		log "fetching pgvector $PGVECTOR_VERSION source (Debian trixie)"
		cat >"$build/sources.list" <<-EOF
			deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main
		EOF
		local aptopts=(-o "Dir::Etc::SourceList=$build/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
			-o "Dir::State::Lists=$build/lists" -o "APT::Sandbox::User=root")
		as_root apt-get "${aptopts[@]}" update -qq >/dev/null
		(cd "$build" && as_root apt-get "${aptopts[@]}" source --download-only -qq "pgvector=$PGVECTOR_VERSION-*" >/dev/null 2>&1 ||
			as_root apt-get "${aptopts[@]}" source --download-only -qq pgvector >/dev/null)
		local orig
		orig="$(ls "$build"/pgvector_*.orig.tar.* | sort -V | tail -n1)"
		[ -n "$orig" ] || die "pgvector source not found"
		tar -xf "$orig" -C "$build"
		src="$(ls -d "$build"/pgvector-*/ | sort -V | tail -n1)"
	fi
	log "building pgvector in $src"
	# OPTFLAGS="" keeps the build portable (no -march=native).
	make -s -C "$src" PG_CONFIG="$pgconfig" OPTFLAGS="" >/dev/null
	as_root make -s -C "$src" PG_CONFIG="$pgconfig" OPTFLAGS="" install >/dev/null
	[ -f "$sharedir/extension/vector.control" ] || die "pgvector install failed"
}

# Postgres refuses to run as root: the cluster belongs to the postgres system
# user. Its data folder must be reachable by that user; when the checkout lives
# somewhere it cannot traverse, the cluster goes under /var/lib/broll-stack.
pg_data_dir() {
	local dir="$STACK_DIR/pg"
	if [ "$(id -u)" -eq 0 ] && ! runuser -u "$PG_USER_OS" -- test -x "$STACK_DIR" 2>/dev/null; then
		dir="/var/lib/broll-stack/$(printf '%s' "$STACK_DIR" | sha1sum | cut -c1-12)/pg"
	fi
	echo "$dir"
}

# Postgres' memory: shared_buffers holds the vector graphs (390 MB at
# 100,000 embedded clips) with the heap and B-trees the lists read, so a
# search is not a read from disk. glibc gives a backend's freed memory back
# to the kernel at the end of each query (trim) and maps big blocks
# afresh; an HNSW walk allocates a few MB per search, so every search paid
# page faults for it (a tenth of Postgres' CPU under load). The MALLOC_*
# settings (mallopt(3)) keep up to 64 MB per backend for the next query.
PG_SHARED_BUFFERS="${BROLL_PG_SHARED_BUFFERS:-2GB}"
PG_MALLOC_ENV=(MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=67108864 MALLOC_TOP_PAD_=16777216)

pg_start() {
	reserve_huge_pages "$1" "$2"
	as_pg env "${PG_MALLOC_ENV[@]}" "$1/pg_ctl" -D "$2" -l "$3/postgres.log" -w -t 60 start >/dev/null
}

# Huge pages for the shared memory (huge_pages = try, the default, uses
# them when the kernel has them). With 4 KB pages every backend faults in
# each page of shared_buffers it touches, once: the first search on a
# connection walking a graph paid 13-16 ms for it instead of 1-2, and every
# walk paid more TLB misses. As root, the pages the cluster asks for
# (postgres -C shared_memory_size_in_huge_pages) are added to the
# machine's free ones if they are short; `down` hands unused ones back.
# Without root, or when the kernel has no room, it runs on normal pages.
reserve_huge_pages() {
	[ "$(id -u)" -eq 0 ] && [ -w /proc/sys/vm/nr_hugepages ] || return 0
	local need total free rsvd
	need="$(as_pg "$1/postgres" -D "$2" -C shared_memory_size_in_huge_pages 2>/dev/null)" || return 0
	[ "${need:-0}" -gt 0 ] 2>/dev/null || return 0
	read -r total free rsvd < <(awk '/^HugePages_Total/{t=$2} /^HugePages_Free/{f=$2} /^HugePages_Rsvd/{r=$2} END{print t+0, f+0, r+0}' /proc/meminfo)
	if [ $((free - rsvd)) -lt "$need" ]; then
		echo $((total + need - free + rsvd)) >/proc/sys/vm/nr_hugepages 2>/dev/null || true
	fi
}

release_huge_pages() {
	[ "$(id -u)" -eq 0 ] && [ -w /proc/sys/vm/nr_hugepages ] || return 0
	local total free rsvd
	read -r total free rsvd < <(awk '/^HugePages_Total/{t=$2} /^HugePages_Free/{f=$2} /^HugePages_Rsvd/{r=$2} END{print t+0, f+0, r+0}' /proc/meminfo)
	[ $((free - rsvd)) -gt 0 ] && echo $((total - free + rsvd)) >/proc/sys/vm/nr_hugepages 2>/dev/null || true
}

as_pg() {
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u "$PG_USER_OS" -- "$@"
	else
		"$@"
	fi
}

pg_running() {
	local bindir data
	bindir="$(pg_bindir)"
	data="$(pg_data_dir)"
	[ -f "$data/PG_VERSION" ] && as_pg "$bindir/pg_ctl" -D "$data" status >/dev/null 2>&1
}

start_postgres() {
	local bindir data run
	bindir="$(pg_bindir)"
	data="$(pg_data_dir)"
	run="$(dirname "$data")/run"
	if [ "$(id -u)" -eq 0 ]; then
		chmod 755 "$STACK_DIR"
		id "$PG_USER_OS" >/dev/null 2>&1 || die "system user $PG_USER_OS missing (install postgresql)"
	fi
	mkdir -p "$data" "$run"
	if [ "$(id -u)" -eq 0 ]; then chown "$PG_USER_OS" "$data" "$run"; fi
	chmod 700 "$data"
	if [ ! -f "$data/PG_VERSION" ]; then
		log "initdb $data"
		as_pg "$bindir/initdb" -D "$data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
		cat >>"$data/postgresql.conf" <<-EOF
			# broll local stack
			listen_addresses = '127.0.0.1'
			port = $PG_PORT
			unix_socket_directories = '$run'
			max_connections = 300
			shared_buffers = $PG_SHARED_BUFFERS
			work_mem = 16MB
			maintenance_work_mem = 512MB
			max_wal_size = 4GB
			log_min_messages = warning
		EOF
	fi
	if ! pg_running; then
		log "starting postgres on 127.0.0.1:$PG_PORT"
		pg_start "$bindir" "$data" "$run"
	fi
	local psql=("$bindir/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 -qtA)
	# A cluster made before shared_buffers was raised gets the new size.
	if [ "$("${psql[@]}" -c "SELECT setting::bigint * 8192 = pg_size_bytes('$PG_SHARED_BUFFERS') FROM pg_settings WHERE name = 'shared_buffers'")" != "t" ]; then
		log "setting shared_buffers to $PG_SHARED_BUFFERS (restart)"
		"${psql[@]}" -c "ALTER SYSTEM SET shared_buffers = '$PG_SHARED_BUFFERS'" >/dev/null
		as_pg "$bindir/pg_ctl" -D "$data" -m fast -w stop >/dev/null
		pg_start "$bindir" "$data" "$run"
	fi
	if [ "$("${psql[@]}" -c "SELECT 1 FROM pg_roles WHERE rolname = '$DB_ROLE'")" != "1" ]; then
		"${psql[@]}" -c "CREATE ROLE $DB_ROLE LOGIN SUPERUSER" >/dev/null
	fi
	if [ "$("${psql[@]}" -c "SELECT 1 FROM pg_database WHERE datname = '$DB_NAME'")" != "1" ]; then
		"${psql[@]}" -c "CREATE DATABASE $DB_NAME OWNER $DB_ROLE" >/dev/null
	fi
}

redis_running() {
	redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null | grep -q PONG
}

port_busy() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# choose_ports moves off ports that something else (another checkout's
# stack, say) already uses, the first time this stack starts.
choose_ports() {
	[ -f "$PORTS_FILE" ] && return
	if [ ! -f "$(pg_data_dir)/PG_VERSION" ]; then
		while port_busy "$PG_PORT"; do PG_PORT=$((PG_PORT + 1)); done
	fi
	while port_busy "$REDIS_PORT"; do REDIS_PORT=$((REDIS_PORT + 1)); done
	printf 'PG_PORT=%s\nREDIS_PORT=%s\n' "$PG_PORT" "$REDIS_PORT" >"$PORTS_FILE"
}

start_redis() {
	mkdir -p "$STACK_DIR/redis"
	if redis_running; then return; fi
	# The port was free when chosen, but the default ports lie in the
	# kernel's ephemeral range: on a busy machine a client connection may
	# hold one as its local port when Redis binds. Then move on to the next
	# free port (and remember it) rather than fail.
	for _ in $(seq 1 10); do
		log "starting redis on 127.0.0.1:$REDIS_PORT"
		# 64 databases so that test packages can each take one; no
		# persistence: Redis never holds the only copy of anything.
		: >"$STACK_DIR/redis/redis.log"
		redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --dir "$STACK_DIR/redis" \
			--daemonize yes --pidfile "$STACK_DIR/redis/redis.pid" --logfile "$STACK_DIR/redis/redis.log" \
			--databases 64 --save "" --appendonly no >/dev/null
		for _ in $(seq 1 50); do
			redis_running && return
			grep -q "Address already in use" "$STACK_DIR/redis/redis.log" && break
			sleep 0.1
		done
		grep -q "Address already in use" "$STACK_DIR/redis/redis.log" || break
		REDIS_PORT=$((REDIS_PORT + 1))
		while port_busy "$REDIS_PORT"; do REDIS_PORT=$((REDIS_PORT + 1)); done
		printf 'PG_PORT=%s\nREDIS_PORT=%s\n' "$PG_PORT" "$REDIS_PORT" >"$PORTS_FILE"
	done
	die "redis did not start; see $STACK_DIR/redis/redis.log"
}

write_env() {
	cat >"$ENV_FILE.tmp" <<-EOF
		DATABASE_URL=postgres://$DB_ROLE@127.0.0.1:$PG_PORT/$DB_NAME?sslmode=disable
		REDIS_URL=redis://127.0.0.1:$REDIS_PORT/0
		BROLL_TEST_VERSITYGW=$(versitygw_bin)
		BROLL_TEST_OLLAMA=$(ollama_bin)
		BROLL_TEST_PROMTOOL=$(promtool_bin)
		BROLL_TEST_JAEGER=$(jaeger_bin)
	EOF
	mv "$ENV_FILE.tmp" "$ENV_FILE"
}

cmd_up() {
	mkdir -p "$STACK_DIR"
	ensure_packages
	choose_ports
	start_postgres
	start_redis
	write_env
	cat "$ENV_FILE"
}

cmd_down() {
	local bindir data
	bindir="$(pg_bindir)"
	data="$(pg_data_dir)"
	if [ -n "$bindir" ] && pg_running; then
		log "stopping postgres"
		as_pg "$bindir/pg_ctl" -D "$data" -m fast -w stop >/dev/null
		release_huge_pages
	fi
	if command -v redis-cli >/dev/null 2>&1 && redis_running; then
		log "stopping redis"
		redis-cli -h 127.0.0.1 -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true
	fi
}

# Restarts Postgres alone, Redis staying up: what an upgrade, a setting
# that needs a restart or a crash does to running API nodes (empty shared
# buffers, every connection gone). deploy/bench/warm measures that.
cmd_restart_postgres() {
	local bindir data
	bindir="$(pg_bindir)"
	data="$(pg_data_dir)"
	pg_running || die "postgres is not running; run: $0 up"
	log "restarting postgres"
	as_pg "$bindir/pg_ctl" -D "$data" -m fast -w stop >/dev/null
	pg_start "$bindir" "$data" "$(dirname "$data")/run"
}

cmd_status() {
	local rc=0
	if [ -n "$(pg_bindir)" ] && pg_running; then echo "postgres: running on 127.0.0.1:$PG_PORT"; else echo "postgres: stopped"; rc=1; fi
	if command -v redis-cli >/dev/null 2>&1 && redis_running; then echo "redis: running on 127.0.0.1:$REDIS_PORT"; else echo "redis: stopped"; rc=1; fi
	return $rc
}

# Drops databases left by test runs that were killed before their cleanup.
cmd_gc_test_dbs() {
	local bindir
	bindir="$(pg_bindir)"
	pg_running || return 0
	local psql=("$bindir/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -qtA)
	for db in $("${psql[@]}" -c "SELECT datname FROM pg_database WHERE datname LIKE 'broll\_test\_%'"); do
		"${psql[@]}" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null || true
	done
}

case "${1:-up}" in
up) cmd_up ;;
gc-test-dbs) cmd_gc_test_dbs ;;
down) cmd_down ;;
restart-postgres) cmd_restart_postgres ;;
status) cmd_status ;;
env) [ -f "$ENV_FILE" ] || die "no env file; run: $0 up"; cat "$ENV_FILE" ;;
destroy)
	cmd_down
	data="$(pg_data_dir)"
	rm -rf "$STACK_DIR" "$(dirname "$data")"
	;;
*) die "usage: $0 up|down|restart-postgres|status|env|destroy|gc-test-dbs" ;;
esac
