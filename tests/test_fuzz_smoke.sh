#!/usr/bin/env bash
# CI smoke test of the parsers under libFuzzer + ASan + UBSan: builds the fuzz targets
# (make fuzz-build), replays every input under tests/fuzz/regressions/ and fuzzes each target
# for FUZZ_SMOKE_SECONDS (default 4: seven targets, kept short for the 15-minute suite, which ran
# 14:46-14:54 in the VM's slow spells with 6) from
# its seed corpus. Fails on any crash, leak, hang or
# UB report. Longer campaigns: make fuzz FUZZ_SECONDS=N.
set -u
cd "$(dirname "$0")/.."
seconds=${FUZZ_SMOKE_SECONDS:-4}
make --no-print-directory -s fuzz-build >/dev/null || { echo "test_fuzz_smoke: build failed"; exit 1; }
exec make --no-print-directory -s fuzz FUZZ_SECONDS="$seconds"
