#!/usr/bin/env bash
# Runs every test program given on the command line (cmocka binaries), then the script tests
# (tests/test_*.sh), and prints one closing line "N passed, N failed".
set -u
cd "$(dirname "$0")/.."
# The tests plan with the heuristics, not with whatever the user's tuning database holds (a
# damaged one would add warning lines to commands whose stderr the tests count): a database
# that does not exist is an empty one. test_tune.sh sets up its own.
CONVGRAD_TUNING_DB=$(mktemp -u "${TMPDIR:-/tmp}/cg-tests-tuning.XXXXXX.json")
export CONVGRAD_TUNING_DB
passed=0
failed=0
failed_names=()
run_one() {
    local name=$1
    shift
    local start=$SECONDS
    if "$@"; then
        passed=$((passed + 1))
        echo "[PASS] $name ($((SECONDS - start)) s)"
    else
        failed=$((failed + 1))
        failed_names+=("$name")
        echo "[FAIL] $name ($((SECONDS - start)) s)"
    fi
}
for bin in "$@"; do
    run_one "$(basename "$bin")" "$bin"
done
for script in tests/test_*.sh; do
    [ -e "$script" ] || continue
    run_one "$(basename "$script")" bash "$script"
done
for script in tests/test_*.py; do
    [ -e "$script" ] || continue
    run_one "$(basename "$script")" /usr/bin/python3 "$script"
done
if [ "$failed" -gt 0 ]; then
    echo "failed: ${failed_names[*]}"
fi
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
