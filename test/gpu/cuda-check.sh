#!/bin/bash
# The ONNX CUDA paths (--atr-device cuda:N, catalog --device cuda) on a GPU
# machine that has no Go toolchain and no PostgreSQL: build the test
# binaries here, copy DIR there, run them there.
#
#   bash test/gpu/cuda-check.sh build DIR   # here, after make deps
#   bash DIR/cuda-check.sh run              # on the GPU machine
#
# "run" prints what the machine offers (GPU, CUDA and cuDNN libraries, any
# onnxruntime CUDA provider) and runs the retriever's and the catalog's
# ONNX tests against the onnxruntime library carried in DIR, then again
# with a CUDA provider of the same release if the machine has one
# (providers load from the core library's folder). TestONNXScorerEndToEnd
# needs PostgreSQL and fails without it; the others need none.
set -u
case ${1:-} in
build)
	dir=${2:?usage: $0 build DIR}
	set -e
	mkdir -p "$dir"
	go test -c -ldflags="-s -w" -o "$dir/retriever.test" ./retriever
	go test -c -ldflags="-s -w" -o "$dir/catalog.test" ./catalog
	cp .deps/onnxruntime/lib/libonnxruntime.so.1 "$dir/"
	mkdir -p "$dir/retriever" "$dir/catalog" # the tests' working directories
	cp "$0" "$dir/cuda-check.sh"
	xz -f -T0 "$dir/retriever.test" "$dir/catalog.test" "$dir/libonnxruntime.so.1"
	du -sh "$dir"
	;;
run)
	dir=$(cd "$(dirname "$0")" && pwd)
	d=$(mktemp -d)
	for f in retriever.test catalog.test libonnxruntime.so.1; do xz -dc "$dir/$f.xz" >"$d/$f"; done
	chmod +x "$d"/*.test
	ln -sf libonnxruntime.so.1 "$d/libonnxruntime.so"
	echo "== GPU"
	nvidia-smi -L
	nvidia-smi --query-gpu=driver_version,memory.total --format=csv,noheader
	echo "== CUDA, cuDNN and onnxruntime libraries"
	find / -xdev \( -name 'libonnxruntime_providers_*' -o -name 'libcudnn.so.*' -o -name 'libcudart.so.*' -o -name 'libcublasLt.so.*' \) 2>/dev/null | sort
	tests() {
		echo "== ONNX tests, onnxruntime from $1"
		(cd "$dir/retriever" && ATRIUM_ONNXRUNTIME_LIB=$1/libonnxruntime.so "$d/retriever.test" -test.run TestONNX -test.v -test.count=1 2>&1 | grep -E '^(---|ok|PASS|FAIL)|CUDA|cuda')
		(cd "$dir/catalog" && ATRIUM_ONNXRUNTIME_LIB=$1/libonnxruntime.so "$d/catalog.test" -test.run TestONNX -test.v -test.count=1 2>&1 | grep -E '^(---|ok|PASS|FAIL)|CUDA|cuda')
	}
	tests "$d"
	p=$(find / -xdev -name libonnxruntime_providers_cuda.so 2>/dev/null | head -1)
	if [ -n "$p" ]; then
		cp "$(dirname "$p")"/libonnxruntime_providers_*.so "$d/"
		ldd "$d/libonnxruntime_providers_cuda.so" | grep 'not found'
		tests "$d"
	else
		echo "== no libonnxruntime_providers_cuda.so on this machine: only the fallback path ran"
	fi
	;;
*)
	sed -n '2,15p' "$0"
	exit 2
	;;
esac
