#!/usr/bin/env bash
# Runs every test program given on the command line (cmocka binaries) and the script tests
# (tests/test_*.sh, tests/test_*.py), and prints one closing line "N passed, N failed".
#
# The suite is CPU-bound on the 2-core VM (test_cpu_kernels compiles its packs with make -j2),
# so it runs in two lanes that keep both cores busy to the end:
# - lane 1: the quick binaries, then test_cpu_kernels (two thirds of the suite's time), then
#   its rerun under the sanitizers (test_sanitizers.sh test_cpu_kernels), on the packs it built;
# - lane 2: test_vulkan with test_vulkan_subgroups.sh (its rerun at other subgroup sizes), the
#   sanitizer rerun of every other binary (test_sanitizers.sh --skip test_cpu_kernels), which
#   also builds the sanitized binaries;
# - then both lanes take the other scripts one at a time, whichever lane is free (run_scripts).
# A binary's sanitized rerun starts once the binary is done (two builds of one pack at once
# collide). With the whole sanitizer rerun at the end of lane 1 (its test_vulkan 105 s of it),
# the second core was idle for that long; with lane 2's rerun after its scripts, lane 1 waited
# for it to build test_cpu_kernels' sanitized binary (about 40 s on the 2-vCPU Zen 3). Each
# suite's output goes to its own log, printed whole, with its [PASS]/[FAIL] line, in the fixed
# order below as the suites end.
set -u
cd "$(dirname "$0")/.."
# The tests plan with the heuristics, not with whatever the user's tuning database holds (a
# damaged one would add warning lines to commands whose stderr the tests count): a database
# that does not exist is an empty one. test_tune.sh sets up its own.
CONVGRAD_TUNING_DB=$(mktemp -u "${TMPDIR:-/tmp}/cg-tests-tuning.XXXXXX.json")
export CONVGRAD_TUNING_DB
logs=$(mktemp -d "${TMPDIR:-/tmp}/cg-tests-logs.XXXXXX")
trap 'rm -rf "$logs"' EXIT

# children_cpu FILE: the CPU seconds (user + system) of this shell's finished children so far
# into FILE, as bash's `times` reports them ("0m1.250s 0m0.030s" on its second line); `times`
# runs in this shell (in a command substitution it would report the substitution's children).
children_cpu() {
    times > "$1.times"
    awk 'NR == 2 {
        total = 0
        for (i = 1; i <= 2; i++) { split($i, part, "m"); total += part[1] * 60 + part[2] }
        printf "%d\n", total }' "$1.times" > "$1"
}

# run_suite INDEX COMMAND...: COMMAND's output into $logs/INDEX.log, then "STATUS SECONDS
# CPU_SECONDS" into $logs/INDEX.done (written last, so that its presence means the log is
# complete). The suite is CPU-bound, so a suite's CPU seconds are what it costs the others.
run_suite() {
    local index=$1
    shift
    local start=$SECONDS status=0 cpu_before cpu_after
    children_cpu "$logs/$index.cpu"
    read -r cpu_before < "$logs/$index.cpu"
    "$@" > "$logs/$index.log" 2>&1 || status=$?
    children_cpu "$logs/$index.cpu"
    read -r cpu_after < "$logs/$index.cpu"
    echo "$status $((SECONDS - start)) $((cpu_after - cpu_before))" > "$logs/$index.tmp" &&
        mv "$logs/$index.tmp" "$logs/$index.done"
}

names=()
commands=()    # commands[INDEX]: how suite names[INDEX] runs
quick=()       # lane 1: the binaries but test_cpu_kernels and test_vulkan
kernels=()     # lane 1 after them: test_cpu_kernels, then its sanitized rerun
vulkan=()      # lane 2: test_vulkan, test_vulkan_subgroups.sh
scripts=()     # lane 2 after them: the other scripts
add_suite() { # add_suite NAME COMMAND...: a suite's index is its position
    names+=("$1")
    shift
    commands+=("$*")
}
for bin in "$@"; do
    case $(basename "$bin") in
    test_vulkan) vulkan=("${#names[@]}" "${vulkan[@]}") ;;
    test_cpu_kernels) kernels+=("${#names[@]}") ;;
    *) quick+=("${#names[@]}") ;;
    esac
    add_suite "$(basename "$bin")" "$bin"
done
for script in tests/test_*.sh tests/test_*.py; do
    [ -e "$script" ] || continue
    case $(basename "$script") in
    test_sanitizers.sh) continue ;;
    test_vulkan_subgroups.sh) vulkan+=("${#names[@]}") ;;
    *) scripts+=("${#names[@]}") ;;
    esac
    case $script in
    *.py) add_suite "$(basename "$script")" /usr/bin/python3 "$script" ;;
    *) add_suite "$(basename "$script")" bash "$script" ;;
    esac
done
sanitized_others=${#names[@]}
add_suite "test_sanitizers.sh --skip test_cpu_kernels" bash tests/test_sanitizers.sh --skip test_cpu_kernels
sanitized_kernels=${#names[@]}
add_suite "test_sanitizers.sh test_cpu_kernels" bash tests/test_sanitizers.sh test_cpu_kernels

# run_index INDEX: suite names[INDEX] (its command's words hold no spaces).
run_index() {
    # shellcheck disable=SC2086
    run_suite "$1" ${commands[$1]}
}
# wait_for INDEX...: until those suites are done
wait_for() {
    for index in "$@"; do
        while [ ! -e "$logs/$index.done" ]; do sleep 1; done
    done
}

# run_scripts: the scripts not yet taken, one at a time; both lanes end with it, so that the
# lane done first takes the scripts left (mkdir claims one atomically). The two longest come
# first: with every script in lane 2 it ended 70 s after lane 1 (the 2-vCPU Zen 3).
run_scripts() {
    for index in "${scripts[@]}"; do
        mkdir "$logs/$index.claim" 2>/dev/null && run_index "$index"
    done
}
longest_first=()
for index in "${scripts[@]}"; do
    case ${names[$index]} in
    test_sweep.sh | test_fuzz_smoke.sh) longest_first=("$index" "${longest_first[@]}") ;;
    *) longest_first+=("$index") ;;
    esac
done
scripts=("${longest_first[@]}")

(
    for index in "${quick[@]}" "${kernels[@]}"; do run_index "$index"; done
    wait_for "$sanitized_others" # it builds the sanitized binaries
    run_index "$sanitized_kernels"
    run_scripts
) &
(
    for index in "${vulkan[@]}"; do run_index "$index"; done
    wait_for "${quick[@]}"
    run_index "$sanitized_others"
    run_scripts
) &

passed=0
failed=0
failed_names=()
for index in "${!names[@]}"; do
    while [ ! -e "$logs/$index.done" ]; do sleep 1; done
    read -r status seconds cpu < "$logs/$index.done"
    cat "$logs/$index.log"
    if [ "$status" -eq 0 ]; then
        passed=$((passed + 1))
        echo "[PASS] ${names[$index]} ($seconds s, $cpu CPU s)"
    else
        failed=$((failed + 1))
        failed_names+=("${names[$index]}")
        echo "[FAIL] ${names[$index]} ($seconds s, $cpu CPU s)"
    fi
done
wait
if [ "$failed" -gt 0 ]; then
    echo "failed: ${failed_names[*]}"
fi
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
