#!/usr/bin/env bash
# Runs every test program given on the command line (cmocka binaries) and the script tests
# (tests/test_*.sh, tests/test_*.py), and prints one closing line "N passed, N failed".
#
# Two lanes run side by side: the binaries one after another, then test_sanitizers.sh, which
# reruns them on the packs they built (two builds of one pack at once collide); and meanwhile
# test_vulkan with test_vulkan_subgroups.sh (its rerun at other subgroup sizes), then the other
# scripts one after another. test_sanitizers.sh waits for both Vulkan suites (it reruns
# test_vulkan too). test_vulkan had run in the first lane, which took 900 of the suite's 911 s
# while the second was done after 300.
# In one lane the suite kept two cores busy only 1.46 of the time on average (the
# kernel tests compile packs with make -j2, the scripts mostly run one process), 15 minutes
# on the 2-core VM. Each suite's output goes to its own log, printed whole, with its
# [PASS]/[FAIL] line, in the fixed order below as the suites end.
set -u
cd "$(dirname "$0")/.."
# The tests plan with the heuristics, not with whatever the user's tuning database holds (a
# damaged one would add warning lines to commands whose stderr the tests count): a database
# that does not exist is an empty one. test_tune.sh sets up its own.
CONVGRAD_TUNING_DB=$(mktemp -u "${TMPDIR:-/tmp}/cg-tests-tuning.XXXXXX.json")
export CONVGRAD_TUNING_DB
logs=$(mktemp -d "${TMPDIR:-/tmp}/cg-tests-logs.XXXXXX")
trap 'rm -rf "$logs"' EXIT

# run_suite INDEX COMMAND...: COMMAND's output into $logs/INDEX.log, then "STATUS SECONDS"
# into $logs/INDEX.done (written last, so that its presence means the log is complete).
run_suite() {
    local index=$1
    shift
    local start=$SECONDS status=0
    "$@" > "$logs/$index.log" 2>&1 || status=$?
    echo "$status $((SECONDS - start))" > "$logs/$index.tmp" && mv "$logs/$index.tmp" "$logs/$index.done"
}

# run_script INDEX: the script names[INDEX] under tests/, by its interpreter.
run_script() {
    local script=tests/${names[$1]}
    case $script in
    *.py) run_suite "$1" /usr/bin/python3 "$script" ;;
    *) run_suite "$1" bash "$script" ;;
    esac
}

names=()
binaries=()       # indices of the binaries the first lane runs
vulkan=()         # test_vulkan, then test_vulkan_subgroups.sh: the second lane's first
after_binaries=() # scripts that rerun the binaries on the packs those build
scripts=()
for bin in "$@"; do
    case $(basename "$bin") in
    test_vulkan) vulkan+=("${#names[@]}") ;;
    *) binaries+=("${#names[@]}") ;;
    esac
    names+=("$(basename "$bin")")
done
for script in tests/test_*.sh tests/test_*.py; do
    [ -e "$script" ] || continue
    case $(basename "$script") in
    test_sanitizers.sh) after_binaries+=("${#names[@]}") ;;
    test_vulkan_subgroups.sh) vulkan+=("${#names[@]}") ;;
    *) scripts+=("${#names[@]}") ;;
    esac
    names+=("$(basename "$script")")
done
bins=("$@")

# run_index INDEX: the binary or script names[INDEX].
run_index() {
    if [ "$1" -lt "${#bins[@]}" ]; then run_suite "$1" "${bins[$1]}"; else run_script "$1"; fi
}

(
    for index in "${binaries[@]}"; do run_index "$index"; done
    for index in "${vulkan[@]}"; do
        while [ ! -e "$logs/$index.done" ]; do sleep 1; done
    done
    for index in "${after_binaries[@]}"; do run_script "$index"; done
) &
(
    for index in "${vulkan[@]}" "${scripts[@]}"; do run_index "$index"; done
) &

passed=0
failed=0
failed_names=()
for index in "${!names[@]}"; do
    while [ ! -e "$logs/$index.done" ]; do sleep 1; done
    read -r status seconds < "$logs/$index.done"
    cat "$logs/$index.log"
    if [ "$status" -eq 0 ]; then
        passed=$((passed + 1))
        echo "[PASS] ${names[$index]} ($seconds s)"
    else
        failed=$((failed + 1))
        failed_names+=("${names[$index]}")
        echo "[FAIL] ${names[$index]} ($seconds s)"
    fi
done
wait
if [ "$failed" -gt 0 ]; then
    echo "failed: ${failed_names[*]}"
fi
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
