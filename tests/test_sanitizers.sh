#!/usr/bin/env bash
# Runs the C unit tests under AddressSanitizer + UndefinedBehaviorSanitizer with leak checking
# (make test-asan: objects in build-asan/, suppressions for third-party runtimes only in
# tests/lsan.supp). Generated kernel packs are still compiled by their own Makefile without
# sanitizers; the host code that plans, emits, loads and drives them is instrumented.
#   test_sanitizers.sh                   every test binary
#   test_sanitizers.sh NAME...           only those (test_cpu_kernels)
#   test_sanitizers.sh --skip NAME...    all but those
# Each binary reruns on the packs its plain run built (build/test-packs): run it first.
set -u
cd "$(dirname "$0")/.."
only=() skip=() skipping=0
for arg in "$@"; do
    case $arg in
    -h | --help) sed -n '2,8s/^# \{0,1\}//p' "$0"; exit 0 ;;
    --skip) skipping=1 ;;
    -*) echo "test_sanitizers.sh: unknown option '$arg' (see --help)" >&2; exit 2 ;;
    *) if [ "$skipping" = 1 ]; then skip+=("$arg"); else only+=("$arg"); fi ;;
    esac
done
exec make --no-print-directory -s test-asan ASAN_ONLY="${only[*]}" ASAN_SKIP="${skip[*]}"
