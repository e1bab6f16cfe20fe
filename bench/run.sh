#!/usr/bin/env bash
# run.sh: times oneDNN on every shape of a shapes file and prints one table row per op.
#
#   bash bench/run.sh [SHAPES_FILE]     (default: shapes.txt next to this script)
#
# Environment: THREADS (default 2), REPS, MIN_MS (harness defaults when unset),
# JSON=1 to print the harness's JSON lines (one object per op) instead of the table,
# BENCH_ARGS for further harness arguments (e.g. "--layout plain", "--direct-only").
# A shapes file holds `ID canonical-problem-string` lines; `#` starts a comment.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
shapes=${1:-$here/shapes.txt}
harness=$here/build/dnnl_bench
threads=${THREADS:-2}

args=(--threads "$threads")
[[ -n ${REPS:-} ]] && args+=(--reps "$REPS")
[[ -n ${MIN_MS:-} ]] && args+=(--min-ms "$MIN_MS")
[[ ${JSON:-0} == 1 ]] && args+=(--json)
# shellcheck disable=SC2206 # word splitting of BENCH_ARGS is intended
[[ -n ${BENCH_ARGS:-} ]] && args+=($BENCH_ARGS)

if [[ ${JSON:-0} != 1 ]]; then
    echo "oneDNN, $threads threads, fastest implementation per op ${BENCH_ARGS:-}"
    printf '%-3s  %-16s %-26s %10s %9s  %s\n' id op impl median_ms GFLOP/s problem
fi
status=0
while read -r id problem _; do
    [[ -z $id || $id == \#* ]] && continue
    # Human lines are `problem op impl median ms gflops GFLOP/s`; regroup them as table rows.
    if ! out=$("$harness" "$problem" "${args[@]}"); then
        echo "$id: dnnl_bench failed on $problem" >&2
        status=1
        continue
    fi
    if [[ ${JSON:-0} == 1 ]]; then
        printf '%s\n' "$out"
    else
        while read -r prob op impl ms _ gflops _; do
            printf '%-3s  %-16s %-26s %10s %9s  %s\n' "$id" "$op" "$impl" "$ms" "$gflops" "$prob"
        done <<<"$out"
    fi
done <"$shapes"
exit $status
