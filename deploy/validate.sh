#!/usr/bin/env bash
# Validates what deploy/ holds that cannot run here (no container engine, no
# cluster), as far as it can be validated without one:
#
#   1. the Dockerfile's build steps: deploy/build.sh, which the Dockerfile's
#      RUN lines call, run in a temporary directory (ONNX Runtime from npm,
#      then the binary with cgo), and the result started;
#   2. the example configuration accepted by the built binary and equal to
#      what it generates;
#   3. the Kubernetes manifests rendered by kubectl kustomize and the systemd
#      unit checked by systemd-analyze, when those tools are installed;
#   4. go test ./deploy: every manifest and compose.yaml parsed, required
#      fields, probes, ports and environment names checked against the flags.
#
# Run by `make test` (after the Go tests) or alone: deploy/validate.sh
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
export PATH=/usr/local/go/bin:$PATH

log() { printf 'validate: %s\n' "$*"; }
die() {
	printf 'validate: error: %s\n' "$*" >&2
	exit 1
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

log "shell syntax"
for f in deploy/*.sh test/*.sh; do [ -f "$f" ] || continue; bash -n "$f" || die "$f has a syntax error"; done

log "install.sh probes: each present probe file belongs to the package it names (dpkg -S)"
# shellcheck source=deploy/lib.sh
source deploy/lib.sh
LOG_PREFIX=validate
bad=0
while read -r probe pkg; do
	if [ ! -e "$probe" ]; then
		log "  $probe: not installed here, skipped"
		continue
	fi
	owners=$(dpkg-query -S "$probe" 2>/dev/null | sed 's/: .*//' | tr ',' '\n' | sed 's/^ *//; s/:.*//' || true)
	if ! grep -qx "$pkg" <<<"$owners"; then
		printf 'validate: error: %s is shipped by %s, not by %s\n' "$probe" "${owners:-no package}" "$pkg" >&2
		bad=1
	fi
done < <(package_probes)
[ "$bad" -eq 0 ] || die "deploy/lib.sh package_probes names a file its package does not ship"

log "Dockerfile stage onnxruntime: deploy/build.sh onnxruntime"
# Keep the npm tarball next to the one deploy/install.sh uses, so repeated
# runs download it once.
ONNXRUNTIME_CACHE=${ONNXRUNTIME_CACHE:-$root/.deps/onnxruntime/npm} \
	deploy/build.sh onnxruntime "$work/lib"
[ -f "$work/lib/libonnxruntime.so.1" ] && [ -L "$work/lib/libonnxruntime.so" ] ||
	die "build.sh onnxruntime did not produce libonnxruntime.so(.1)"

log "Dockerfile stage build: deploy/build.sh binary (cgo, -trimpath)"
VERSION=validate deploy/build.sh binary "$work/bin"
bin=$work/bin/atrium
[ "$("$bin" version)" = "atrium validate" ] || die "the version was not stamped into the binary"
if ldd "$bin" | grep -q 'not found'; then
	die "the binary has unresolved libraries: $(ldd "$bin" | grep 'not found')"
fi

log "runtime stage: the binary starts as the image runs it"
export ATRIUM_ONNXRUNTIME_LIB=$work/lib/libonnxruntime.so
"$bin" serve --help >/dev/null 2>&1 || die "atrium serve --help failed"
"$bin" config check --config deploy/atrium.example.yaml >/dev/null ||
	die "the built binary rejects deploy/atrium.example.yaml"
"$bin" config example | diff -u deploy/atrium.example.yaml - >/dev/null ||
	die "deploy/atrium.example.yaml differs from 'atrium config example' (regenerate it)"

if command -v kubectl >/dev/null; then
	log "kubectl kustomize deploy/k8s"
	kubectl kustomize deploy/k8s >"$work/k8s.yaml" || die "kubectl kustomize deploy/k8s failed"
	for kind in Deployment Service ConfigMap Secret PodDisruptionBudget HorizontalPodAutoscaler; do
		grep -q "^kind: $kind\$" "$work/k8s.yaml" || die "rendered manifests lack a $kind"
	done
else
	log "kubectl not installed: kustomize rendering skipped (go test still parses the manifests)"
fi

if command -v systemd-analyze >/dev/null; then
	log "systemd-analyze verify deploy/systemd/atrium.service"
	# The unit names /usr/local/bin/atrium, which is not installed here.
	out=$(systemd-analyze verify deploy/systemd/atrium.service 2>&1 | grep -v 'is not executable' || true)
	[ -z "$out" ] || die "systemd-analyze: $out"
else
	log "systemd-analyze not installed: unit check skipped (go test still parses it)"
fi

log "go test ./deploy (manifests, compose.yaml, Dockerfile, unit)"
go test -count=1 ./deploy/

log "ok"
