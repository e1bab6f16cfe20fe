#!/usr/bin/env bash
# Reruns the Vulkan kernel tests (build/tests/test_vulkan, validation on) at lavapipe subgroup
# sizes 4 and 16: LP_NATIVE_VECTOR_WIDTH 128/512 bits of f32 lanes. (Size 8, 256 bits, is
# lavapipe's default on AVX machines, "llvmpipe (LLVM 15.0.6, 256 bits)" on the CI's: the
# plain test_vulkan run covers it.) The generated kernels
# never assume a subgroup size; this changes how lavapipe maps every workgroup onto SIMD lanes
# (execution masks, tails, barriers), which is what a real GPU varies too (32 on NVIDIA, 32/64
# on AMD). The pack under build/test-packs is reused, so each pass costs only the runs.
set -u
cd "$(dirname "$0")/.."
bin=${BUILD:-build}/tests/test_vulkan
if [ ! -x "$bin" ]; then
    echo "test_vulkan_subgroups: $bin is not built (make $bin)" >&2
    exit 1
fi
# lavapipe is the device whose subgroup size these variables set; pick it when present.
icd=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json
if [ -z "${VK_ICD_FILENAMES:-}" ] && [ -e "$icd" ]; then export VK_ICD_FILENAMES=$icd; fi
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
status=0
for width in 128 512; do
    echo "test_vulkan_subgroups: LP_NATIVE_VECTOR_WIDTH=$width (subgroup size $((width / 32)))"
    if ! LP_NATIVE_VECTOR_WIDTH=$width "$bin" >"${TMPDIR:-/tmp}/cg_vulkan_sg$width.log" 2>&1; then
        echo "test_vulkan_subgroups: failed at width $width:" >&2
        grep -E "FAILED|ERROR|failures|Validation" "${TMPDIR:-/tmp}/cg_vulkan_sg$width.log" | head -20 >&2
        status=1
    fi
done
exit $status
