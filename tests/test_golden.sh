#!/usr/bin/env bash
# Golden files for emitted sources: the kernels of six representative plans (a planar
# stride-2 grouped dx, stride phases + zero fill + reorders in bf16 NHWC, a split dw+db in f16,
# a Winograd dw+db, a channels-last 1x1 dx whose weight blocks pass the L1, one as a flat
# GEMM with its reduction in chunks), planned for one
# fixed machine's caches (the plans read them, and the goldens must not depend on the host),
# for AVX-512 and the portable C ISA, and their GLSL shaders, as generated from
# tests/golden/problems.json. A template or emitter change shows up here as a diff to review;
# `make golden` (this script with --update) rewrites tests/golden/src after the review.
set -euo pipefail
cd "$(dirname "$0")/.."
update=0
[ "${1:-}" = "--update" ] && update=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
config=tests/golden/problems.json
export CONVGRAD_L1_BYTES=49152 CONVGRAD_L2_BYTES=2097152 CONVGRAD_L3_BYTES=503316480
export CONVGRAD_CPU_VENDOR=intel
build/convgrad gen "$config" -o "$tmp/cpu" --isa avx512,generic --threads 2 >/dev/null
build/convgrad gen "$config" -o "$tmp/vk" --target vulkan --threads 2 >/dev/null
mkdir -p "$tmp/got"
cp "$tmp"/cpu/src/cg_*.c "$tmp"/vk/src/*.comp "$tmp/got/"
count=$(ls "$tmp/got" | wc -l)
if [ "$count" -lt 10 ]; then
    echo "golden: only $count generated sources; expected the kernels of 6 problems" >&2
    exit 1
fi
if [ "$update" = 1 ]; then
    rm -rf tests/golden/src
    mkdir -p tests/golden/src
    cp "$tmp"/got/* tests/golden/src/
    echo "golden: wrote $count files to tests/golden/src"
    exit 0
fi
if ! diff -r -q tests/golden/src "$tmp/got" >/dev/null; then
    diff -r -u tests/golden/src "$tmp/got" | head -60 >&2
    echo "golden: emitted sources differ from tests/golden/src (review, then make golden)" >&2
    exit 1
fi
echo "golden: $count emitted sources match"
