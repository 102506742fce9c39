#!/usr/bin/env bash
# Installs what Atrium needs to build, test, run the demo and the benchmarks on
# Debian 12, and nothing that is already there. Safe to run again: a second run
# changes nothing and says so.
#
#   - Debian packages: PostgreSQL 15 (server, client, server headers),
#     redis-server, pgbouncer, the PostgreSQL JDBC driver and a JDK, build
#     tools, WordNet (wordnet-base, for the retriever's vocabulary), and
#     nodejs/npm only when npm is missing. apt-get update runs once,
#     and only when something is missing.
#   - pgvector $PGVECTOR_VERSION, built from Debian's source package (trixie)
#     against PostgreSQL 15, unless that version is installed already.
#   - The ONNX Runtime shared library from the npm package
#     onnxruntime-node@$ONNXRUNTIME_VERSION, into .deps/onnxruntime/lib.
#   - Go modules (go mod download). Go itself is not installed: it must be at
#     /usr/local/go or on PATH.
#
# Installing needs root; checking does not, so a non-root run on a machine that
# has everything succeeds.
set -euo pipefail
# shellcheck source=deploy/lib.sh
source "$(dirname "$0")/lib.sh"
LOG_PREFIX=install

done_list=()
did() {
	done_list+=("$*")
	log "$*"
}

need_root() {
	if [ "$(id -u)" -ne 0 ]; then
		die "$1 needs root; run as root (or with sudo)"
	fi
}

apt_updated=0
apt_update_once() {
	if [ "$apt_updated" -eq 0 ]; then
		log "apt-get update"
		DEBIAN_FRONTEND=noninteractive apt-get update -qq
		apt_updated=1
	fi
}

# --- Go ---------------------------------------------------------------------
if ! command -v go >/dev/null 2>&1; then
	die "Go is not installed (looked on PATH and in /usr/local/go/bin); install Go $(sed -n 's/^go //p' "$ATRIUM_ROOT/go.mod") or newer first"
fi

# --- Debian packages --------------------------------------------------------
# package_probes (lib.sh) pairs each package with a file it ships; a missing
# file means a missing package. validate.sh proves each pairing with dpkg -S.
missing=()
while read -r probe pkg; do
	[ -e "$probe" ] || missing+=("$pkg")
done < <(package_probes)
if ! command -v npm >/dev/null 2>&1; then
	# nodejs may come from elsewhere (NodeSource); only add Debian's when absent.
	command -v node >/dev/null 2>&1 || missing+=(nodejs)
	missing+=(npm)
fi

# pgvector is built from Debian trixie's source package: bookworm's is older
# than the version the catalog needs.
pgvector_installed() {
	local control=/usr/share/postgresql/$PG_MAJOR/extension/vector.control
	[ -f "$control" ] && [ -f "/usr/lib/postgresql/$PG_MAJOR/lib/vector.so" ] &&
		grep -q "^default_version = '$PGVECTOR_VERSION'" "$control"
}
SRC_LIST=/etc/apt/sources.list.d/atrium-trixie-src.list
need_pgvector=0
pgvector_installed || need_pgvector=1

if [ ${#missing[@]} -gt 0 ] || [ "$need_pgvector" -eq 1 ]; then
	need_root "installing ${missing[*]:-pgvector}"
fi
if [ "$need_pgvector" -eq 1 ] && [ ! -f "$SRC_LIST" ]; then
	# Source entries only: no binary package is ever taken from trixie.
	echo "deb-src http://deb.debian.org/debian trixie main" >"$SRC_LIST"
	did "added $SRC_LIST (source packages only, for pgvector)"
fi

if [ ${#missing[@]} -gt 0 ]; then
	# Deduplicate while keeping order.
	mapfile -t pkgs < <(printf '%s\n' "${missing[@]}" | awk '!seen[$0]++')
	cluster_existed=0
	[ -d "/etc/postgresql/$PG_MAJOR/$PG_CLUSTER" ] && cluster_existed=1
	apt_update_once
	mkdir -p "$DEPS_DIR"
	apt_log=$DEPS_DIR/apt-install.log
	log "apt-get install ${pkgs[*]} (log: ${apt_log#"$ATRIUM_ROOT"/})"
	# A cluster the postgresql package creates takes its locale from the
	# environment; a bare container has none, which would give SQL_ASCII.
	if ! LANG=C.UTF-8 LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -q --no-install-recommends "${pkgs[@]}" >"$apt_log" 2>&1; then
		tail -n 30 "$apt_log" >&2
		die "apt-get install failed (full log: $apt_log)"
	fi
	did "installed Debian packages: ${pkgs[*]}"
	if [ "$cluster_existed" -eq 0 ] && [ -d "/etc/postgresql/$PG_MAJOR/$PG_CLUSTER" ]; then
		# The package created the cluster just now: it is ours, so
		# services.sh may give it trust authentication on loopback.
		touch "$PG_CREATED_MARKER"
		did "PostgreSQL cluster $PG_MAJOR/$PG_CLUSTER was created by this install (marked $PG_CREATED_MARKER)"
	fi
else
	log "Debian packages: all present"
fi

# A PostgreSQL installation without a cluster (removed, or packages installed
# with create_main_cluster = false): create one and mark it as ours.
if ! pg_lsclusters -h 2>/dev/null | awk -v v="$PG_MAJOR" -v c="$PG_CLUSTER" '$1 == v && $2 == c { found = 1 } END { exit !found }'; then
	if pg_accepting; then
		log "no cluster $PG_MAJOR/$PG_CLUSTER, but a server answers on $PG_HOST:$PG_PORT; using that"
	else
		need_root "creating PostgreSQL cluster $PG_MAJOR/$PG_CLUSTER"
		pg_createcluster --locale C.UTF-8 --port "$PG_PORT" "$PG_MAJOR" "$PG_CLUSTER" >/dev/null
		touch "$PG_CREATED_MARKER"
		did "created PostgreSQL cluster $PG_MAJOR/$PG_CLUSTER on port $PG_PORT"
	fi
fi

# --- pgvector -----------------------------------------------------------------
if [ "$need_pgvector" -eq 1 ]; then
	cache=$DEPS_DIR/pgvector
	mkdir -p "$cache"
	cached_orig() {
		local f
		# $1 unquoted on purpose: it may be a glob ("*").
		# shellcheck disable=SC2231
		for f in "$cache"/pgvector_$1.orig.tar.*; do
			[ -f "$f" ] && echo "$f" && return 0
		done
		return 0
	}
	orig=$(cached_orig "$PGVECTOR_VERSION")
	if [ -z "$orig" ]; then
		apt_update_once
		# Download into a folder apt's unprivileged _apt user can write.
		dl=$(mktemp -d)
		chown _apt "$dl" 2>/dev/null || true
		(cd "$dl" && apt-get source -qq --download-only pgvector)
		mv "$dl"/pgvector_* "$cache"/
		rm -rf "$dl"
		orig=$(cached_orig "$PGVECTOR_VERSION")
		if [ -z "$orig" ]; then
			got=$(cached_orig '*')
			die "Debian's pgvector source is not version $PGVECTOR_VERSION (downloaded: ${got:-nothing}); set PGVECTOR_VERSION to build another"
		fi
		did "downloaded $(basename "$orig")"
	fi
	build=$cache/build
	rm -rf "$build"
	mkdir -p "$build"
	tar -xf "$orig" -C "$build" --strip-components=1
	# OPTFLAGS="" keeps -march=native out, so the library runs on any x86-64.
	make -s -C "$build" OPTFLAGS="" PG_CONFIG="$PG_BINDIR/pg_config" >"$cache/build.log" 2>&1 ||
		die "building pgvector failed; see $cache/build.log"
	make -s -C "$build" OPTFLAGS="" PG_CONFIG="$PG_BINDIR/pg_config" install >>"$cache/build.log" 2>&1 ||
		die "installing pgvector failed; see $cache/build.log"
	pgvector_installed || die "pgvector $PGVECTOR_VERSION did not install; see $cache/build.log"
	did "built and installed pgvector $PGVECTOR_VERSION for PostgreSQL $PG_MAJOR"
else
	log "pgvector $PGVECTOR_VERSION: installed"
fi

# --- ONNX Runtime ---------------------------------------------------------------
ort_dir=$(dirname "$ONNXRUNTIME_LIB")
if [ -f "$ort_dir/libonnxruntime.so.1" ] && [ -f "$ort_dir/VERSION" ] &&
	[ "$(cat "$ort_dir/VERSION")" = "$ONNXRUNTIME_VERSION" ]; then
	log "ONNX Runtime $ONNXRUNTIME_VERSION: present in $ort_dir"
else
	cache=$DEPS_DIR/onnxruntime/npm
	mkdir -p "$cache" "$ort_dir"
	tgz=$cache/onnxruntime-node-$ONNXRUNTIME_VERSION.tgz
	if [ ! -f "$tgz" ]; then
		# npm pack fetches the package tarball without running its install
		# scripts (which would try to download CUDA builds from elsewhere).
		(cd "$cache" && npm pack --loglevel=error "onnxruntime-node@$ONNXRUNTIME_VERSION" >/dev/null) ||
			die "npm pack onnxruntime-node@$ONNXRUNTIME_VERSION failed (npm's error above)"
		[ -f "$tgz" ] || die "npm pack onnxruntime-node@$ONNXRUNTIME_VERSION produced no $tgz"
	fi
	member=package/bin/napi-v6/linux/x64/libonnxruntime.so.1
	tmp=$(mktemp -d)
	tar -xzf "$tgz" -C "$tmp" "$member" ||
		die "$tgz has no $member"
	install -m 0644 "$tmp/$member" "$ort_dir/libonnxruntime.so.1"
	rm -rf "$tmp"
	ln -sfn libonnxruntime.so.1 "$ort_dir/libonnxruntime.so"
	rm -f "$tgz" # 100+ MB for all platforms; only the one library is kept
	echo "$ONNXRUNTIME_VERSION" >"$ort_dir/VERSION"
	did "installed ONNX Runtime $ONNXRUNTIME_VERSION into $ort_dir"
fi

# --- Go modules -------------------------------------------------------------
(cd "$ATRIUM_ROOT" && go mod download) || die "go mod download failed"
log "Go modules: downloaded ($(go version | awk '{print $3}'))"

if [ ${#done_list[@]} -eq 0 ]; then
	log "nothing to do: everything was already installed"
else
	log "done (${#done_list[@]} change(s)):"
	printf '  - %s\n' "${done_list[@]}"
fi
