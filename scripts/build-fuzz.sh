#!/bin/bash
# Builds AFL++-instrumented fuzz harnesses into build/afl/ (afl-clang-fast
# with its libFuzzer driver; afl-gcc-fast is broken on Debian 12).  Each
# fuzz/fuzz_NAME.c exports LLVMFuzzerTestOneInput; run one with
#   afl-fuzz -i fuzz/corpus/NAME -o build/afl/out-NAME -- build/afl/fuzz_NAME
# FUZZ_SECONDS=N additionally runs every harness for N seconds (a smoke run).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps fuzz
out=build/afl
mkdir -p "$out/obj"
CC=afl-clang-fast
CFLAGS="-std=c11 -O1 -g -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -DRK_VERSION=\"fuzz\" -Iengine -Ilibmeta -fsanitize=address,undefined"
objs=()
for src in engine/*.c libmeta/*.c; do
	o=$out/obj/$(echo "${src%.c}" | tr / _).o
	isa=""
	case "$src" in
		*_sse2.c) isa=-msse2 ;; *_ssse3.c) isa=-mssse3 ;; *_avx2.c) isa=-mavx2 ;;
		*_avx512.c) isa="-mavx512f -mavx512bw -mavx512vl" ;;
		*_gfni.c) isa="-mgfni -mavx512f -mavx512bw -mavx512vl -mavx2" ;;
	esac
	AFL_QUIET=1 $CC $CFLAGS $isa -c "$src" -o "$o"
	objs+=("$o")
done
for h in fuzz/fuzz_*.c; do
	name=$(basename "${h%.c}")
	AFL_QUIET=1 $CC $CFLAGS -fsanitize=fuzzer "$h" "${objs[@]}" -o "$out/$name" -lz -luuid -lblkid -lcrypto -ljson-c -pthread
	echo "built $out/$name"
done
if [ -n "${FUZZ_SECONDS:-}" ]; then
	for h in fuzz/fuzz_*.c; do
		name=$(basename "${h%.c}"); n=${name#fuzz_}
		AFL_NO_UI=1 AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 \
			timeout $((FUZZ_SECONDS + 30)) afl-fuzz -V "$FUZZ_SECONDS" -i "fuzz/corpus/$n" -o "$out/out-$n" -- "$out/$name" >/dev/null || true
		crashes=$(find "$out/out-$n" -path '*crashes/id*' 2>/dev/null | wc -l)
		echo "$name: ${FUZZ_SECONDS}s, $crashes crashes"
	done
fi
