#!/usr/bin/env bash
# The build steps of deploy/Dockerfile, as a script the Dockerfile runs and
# deploy/validate.sh runs outside Docker, so CI exercises the same commands.
#
#   deploy/build.sh binary OUTDIR       build OUTDIR/atrium (cgo: pg_query_go)
#   deploy/build.sh onnxruntime OUTDIR  put libonnxruntime.so.1 (+ .so link) in
#                                       OUTDIR, from the npm package
#                                       onnxruntime-node@$ONNXRUNTIME_VERSION
#
# Environment: VERSION (stamped into the binary, default "dev"),
# ONNXRUNTIME_VERSION (default 1.30.0), ONNXRUNTIME_CACHE (a directory that
# keeps the npm tarball between runs; default: a temporary one).
set -euo pipefail

ONNXRUNTIME_VERSION=${ONNXRUNTIME_VERSION:-1.30.0}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

die() {
	echo "build.sh: $*" >&2
	exit 1
}

build_binary() {
	local out=$1
	mkdir -p "$out"
	command -v go >/dev/null || die "go is not installed"
	command -v gcc >/dev/null || die "gcc is needed: pg_query_go compiles PostgreSQL's parser with cgo"
	cd "$root"
	CGO_ENABLED=1 go build -trimpath \
		-ldflags "-s -w -X main.version=${VERSION:-dev}" \
		-o "$out/atrium" ./cmd/atrium
	"$out/atrium" version >/dev/null || die "the built binary does not run"
}

build_onnxruntime() {
	local out=$1 cache tgz member tmp
	mkdir -p "$out"
	command -v npm >/dev/null || die "npm is needed to fetch onnxruntime-node@$ONNXRUNTIME_VERSION"
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' RETURN
	cache=${ONNXRUNTIME_CACHE:-$tmp}
	mkdir -p "$cache"
	tgz=$cache/onnxruntime-node-$ONNXRUNTIME_VERSION.tgz
	if [ ! -s "$tgz" ]; then
		# npm pack downloads the tarball without running the package's
		# install scripts (which fetch CUDA builds from elsewhere).
		(cd "$cache" && npm pack --silent "onnxruntime-node@$ONNXRUNTIME_VERSION" >/dev/null)
		[ -s "$tgz" ] || die "npm pack onnxruntime-node@$ONNXRUNTIME_VERSION produced no $tgz"
	fi
	case "$(uname -m)" in
	x86_64 | amd64) member=package/bin/napi-v6/linux/x64/libonnxruntime.so.1 ;;
	aarch64 | arm64) member=package/bin/napi-v6/linux/arm64/libonnxruntime.so.1 ;;
	*) die "no ONNX Runtime build for $(uname -m) in onnxruntime-node" ;;
	esac
	tar -xzf "$tgz" -C "$tmp" "$member" || die "$tgz has no $member"
	install -m 0644 "$tmp/$member" "$out/libonnxruntime.so.1"
	ln -sfn libonnxruntime.so.1 "$out/libonnxruntime.so"
	echo "$ONNXRUNTIME_VERSION" >"$out/VERSION"
	# The library must be an ELF shared object whose dependencies resolve.
	head -c 4 "$out/libonnxruntime.so.1" | grep -q 'ELF' || die "$out/libonnxruntime.so.1 is not an ELF file"
	if command -v ldd >/dev/null && ldd "$out/libonnxruntime.so.1" | grep -q 'not found'; then
		die "libonnxruntime.so.1 has unresolved dependencies: $(ldd "$out/libonnxruntime.so.1" | grep 'not found')"
	fi
}

[ $# -eq 2 ] || die "usage: build.sh binary|onnxruntime OUTDIR"
case "$1" in
binary) build_binary "$2" ;;
onnxruntime) build_onnxruntime "$2" ;;
*) die "unknown step $1 (binary or onnxruntime)" ;;
esac
