#!/usr/bin/env bash
# Runs the C unit tests under AddressSanitizer + UndefinedBehaviorSanitizer with leak checking
# (make test-asan: objects in build-asan/, suppressions for third-party runtimes only in
# tests/lsan.supp). Generated kernel packs are still compiled by their own Makefile without
# sanitizers; the host code that plans, emits, loads and drives them is instrumented.
set -u
cd "$(dirname "$0")/.."
exec make --no-print-directory -s test-asan
