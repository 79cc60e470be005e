#!/usr/bin/env bash
# build-ggml-cpu.sh GGML_SRC OUTDIR: builds ggml's CPU backend (libggml-cpu.so.0) natively for
# this CPU, without cmake, from a ggml source tree at the commit of ../shared/ggml (d99724f2),
# with the options of its native build (OpenMP, llamafile sgemm, repacking). Put OUTDIR first on
# LD_LIBRARY_PATH in front of ../shared/ggml/lib and test-backend-ops runs on it: for CPUs that
# the prebuilt library's AVX512-FP16 code does not run on (AMD Zen 4: SIGILL in
# ggml_vec_dot_f16, so in FLASH_ATTN_EXT and f16 MUL_MAT). See docs/performance.md.
set -euo pipefail
src=$(cd "$1" && pwd)/src
out=$(mkdir -p "$2" && cd "$2" && pwd)
lib=${GGML_LIB:-$(cd "$(dirname "$0")/../../../shared/ggml/lib" && pwd)}
obj=$(mktemp -d)
trap 'rm -rf "$obj"' EXIT
def="-DGGML_USE_OPENMP -DGGML_USE_LLAMAFILE -DGGML_USE_CPU_REPACK -DGGML_BACKEND_SHARED -DGGML_BACKEND_BUILD
  -DGGML_SHARED -DGGML_BUILD -D_GNU_SOURCE -D_XOPEN_SOURCE=600 -DNDEBUG"
inc="-I$src/ggml-cpu -I$src -I$src/../include"
flags="-O3 -march=native -fPIC -fopenmp -pthread"
cd "$src/ggml-cpu"
objs=()
for f in ggml-cpu.c quants.c arch/x86/quants.c; do
  o=$obj/${f//\//_}.o; gcc -std=gnu11 $flags $def $inc -c "$f" -o "$o"; objs+=("$o")
done
for f in ggml-cpu.cpp repack.cpp hbm.cpp traits.cpp amx/amx.cpp amx/mmq.cpp binary-ops.cpp unary-ops.cpp vec.cpp \
  ops.cpp llamafile/sgemm.cpp arch/x86/repack.cpp arch/x86/cpu-feats.cpp; do
  o=$obj/${f//\//_}.o; g++ -std=gnu++17 $flags $def $inc -c "$f" -o "$o"; objs+=("$o")
done
# libggml-base.so.0 is a text file where its symlink was lost; link against the versioned file.
g++ -shared -fopenmp -Wl,-soname,libggml-cpu.so.0 -o "$out/libggml-cpu.so.0" "${objs[@]}" "$lib/libggml-base.so.0.21.0"
echo "$out/libggml-cpu.so.0"
