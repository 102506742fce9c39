#!/usr/bin/env bash
# Runs go vet and every Go test (race detector on), and closes with a summary.
# `make test` runs deploy/install.sh and deploy/services.sh start first.
#
# The full verbose log goes to .run/test.log; the console shows package
# results, failures, skips and test output, without the RUN/PASS chatter.
#
# GOTEST_FLAGS adds flags (e.g. GOTEST_FLAGS="-run TestProxy"), GOTEST_PKGS
# replaces ./... .
set -uo pipefail
# shellcheck source=deploy/lib.sh
source "$(dirname "$0")/lib.sh"
LOG_PREFIX="test"
cd "$ATRIUM_ROOT" || exit 1

# pg_query_go needs cgo; the ONNX tests load the library install.sh put here.
export CGO_ENABLED=1
export ATRIUM_ONNXRUNTIME_LIB=${ATRIUM_ONNXRUNTIME_LIB:-$ONNXRUNTIME_LIB}
ort_dir=$(dirname "$ATRIUM_ONNXRUNTIME_LIB")
export LD_LIBRARY_PATH=$ort_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p "$RUN_DIR"
log_file=$RUN_DIR/test.log
read -r -a pkgs <<<"${GOTEST_PKGS:-./...}"
read -r -a extra <<<"${GOTEST_FLAGS:-}"

start=$SECONDS
log "go vet ${pkgs[*]}"
go vet "${pkgs[@]}"
vet_status=$?

# A package's tests take at most about 3 minutes here (test/e2e, which
# builds the binary first); 30 minutes leaves room for a loaded machine
# and still lets a hung package print its goroutines inside CI's 90.
log "go test -race -count=1 -timeout 30m ${extra[*]} ${pkgs[*]} (full log: ${log_file#"$ATRIUM_ROOT"/})"
go test -race -count=1 -timeout 30m -v "${extra[@]}" "${pkgs[@]}" 2>&1 |
	tee "$log_file" |
	grep --line-buffered -vE '^[[:space:]]*(=== (RUN|PAUSE|CONT|NAME)|--- PASS)'
test_status=${PIPESTATUS[0]}

count() { grep -cE "$1" "$log_file"; }
passed=$(count '^[[:space:]]*--- PASS')
failed=$(count '^[[:space:]]*--- FAIL')
skipped=$(count '^[[:space:]]*--- SKIP')
pkg_ok=$(count '^ok[[:space:]]')
pkg_fail=$(count '^FAIL[[:space:]]')
pkg_none=$(count '^\?[[:space:]].*\[no test files\]')
# A package that does not build, or a test binary killed by the timeout,
# fails without a --- FAIL line for the test that was running: count those too.
failed=$((failed + $(count '^FAIL[[:space:]].*\[(build|setup) failed\]') + $(count '^panic: test timed out after|^SIGQUIT: quit')))
if [ "$test_status" -ne 0 ] && [ "$failed" -eq 0 ]; then
	failed=1
fi

echo
echo "==================== make test summary ===================="
if [ "$vet_status" -eq 0 ]; then echo "go vet:   ok"; else echo "go vet:   FAILED"; fi
echo "packages: $pkg_ok ok, $pkg_fail failed, $pkg_none without tests"
if [ "$pkg_fail" -gt 0 ]; then
	grep -E '^FAIL[[:space:]]' "$log_file" | sed 's/^/  /'
fi
if [ "$failed" -gt 0 ]; then
	echo "failed tests:"
	grep -E '^[[:space:]]*--- FAIL' "$log_file" | sed 's/^[[:space:]]*/  /'
	# Why, in a few lines each: a failing test's own output can be long
	# (a served process's log, printed at cleanup) and push the assertion
	# out of a log's tail. testify's blocks (Error Trace to Messages), race
	# reports' first frames and panics, each line cut at 300 characters.
	echo "why (first 60 lines; full log: ${log_file#"$ATRIUM_ROOT"/}):"
	awk '
		/^[[:space:]]*Error Trace:/ { n = 8 }
		/WARNING: DATA RACE/ { n = 4 }
		/^panic: / { n = 3 }
		n > 0 { print "  " substr($0, 1, 300); n--; if ($0 ~ /^[[:space:]]*Test:/) n = 1; else if ($0 ~ /^[[:space:]]*Messages:/) n = 0 }
	' "$log_file" | head -n 60
fi
echo "time:     $((SECONDS - start))s"
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$vet_status" -eq 0 ] && [ "$test_status" -eq 0 ]
