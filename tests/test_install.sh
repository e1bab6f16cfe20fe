#!/usr/bin/env bash
# make install into a temporary prefix, generate a pack with the installed generator, build
# examples/run_pack.c against the prefix through pkg-config only, and run it with neither the
# generator nor a compiler reachable (the runtime must not need them).
set -eu
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
make -s install PREFIX="$tmp/prefix" >/dev/null
for f in bin/convgrad lib/libconvgrad.a lib/libconvgrad.so include/convgrad/convgrad.h \
         include/convgrad/cg_abi.h include/convgrad/cg_problem.h lib/pkgconfig/convgrad.pc \
         share/convgrad/templates; do
    [ -e "$tmp/prefix/$f" ] || { echo "test_install: $f not installed"; exit 1; }
done
# The installed generator finds its templates under share/ (not the source tree).
(cd "$tmp" && CONVGRAD_TEMPLATES= "$tmp/prefix/bin/convgrad" gen \
    "$OLDPWD/configs/examples/ex_grouped_nhwc_wrw.json" -o "$tmp/pack" --build >/dev/null)
cp configs/examples/ex_1d_f16.json "$tmp/"
(cd "$tmp" && "$tmp/prefix/bin/convgrad" gen ex_1d_f16.json -o "$tmp/pack16" --build >/dev/null)
# Build the example with pkg-config against the prefix only: a copy outside the tree.
mkdir "$tmp/example"
cp examples/run_pack.c examples/Makefile "$tmp/example/"
PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" make -s -C "$tmp/example" CC=clang >/dev/null
[ -x "$tmp/example/run_pack" ] || { echo "test_install: example not built"; exit 1; }
# Run without the generator or clang on PATH.
run() { env -i PATH=/nonexistent HOME="$tmp" "$tmp/example/run_pack" "$@"; }
out=$(run "$tmp/pack")
echo "$out" | grep -q '^dw: [0-9]* elements, sum' || { echo "test_install: bad output: $out"; exit 1; }
out16=$(run "$tmp/pack16" ex_1d_f16)
echo "$out16" | grep -q '^dx: [0-9]* elements' || { echo "test_install: bad output: $out16"; exit 1; }
if echo "$out$out16" | grep -qi 'nan\|inf'; then echo "test_install: non-finite: $out"; exit 1; fi
# The same run twice gives the same bits (deterministic kernels), and an unknown problem fails.
[ "$(run "$tmp/pack")" = "$out" ] || { echo "test_install: runs differ"; exit 1; }
if run "$tmp/pack" no_such_problem 2>"$tmp/err"; then echo "test_install: unknown problem ran"; exit 1; fi
grep -q 'not in pack' "$tmp/err" || { echo "test_install: unclear error: $(cat "$tmp/err")"; exit 1; }
echo "test_install: ok"
echo "$out"
