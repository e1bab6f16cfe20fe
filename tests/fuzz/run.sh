#!/usr/bin/env bash
# Runs the libFuzzer targets: run.sh BIN_DIR SECONDS TARGET...
# Each target first replays tests/fuzz/regressions/<target>/ (every crash found so far must stay
# fixed), then, when SECONDS > 0, fuzzes for SECONDS on a scratch copy of
# tests/fuzz/corpus/<target>/ (the repository's corpus is never written). New crash inputs are
# kept under BIN_DIR/artifacts/<target>/. Exits 1 when any target crashed.
set -u
cd "$(dirname "$0")/../.."
bin_dir=$1
seconds=$2
shift 2
# Largest input per target: manifests of many-problem packs are big, the rest are lines/headers.
max_len() { case $1 in manifest) echo 65536 ;; problem_json) echo 8192 ;; *) echo 4096 ;; esac; }
scratch=$(mktemp -d "${TMPDIR:-/tmp}/convgrad_fuzz.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
failed=0
for t in "$@"; do
    fuzzer=$bin_dir/fuzz_$t
    regressions=tests/fuzz/regressions/$t
    if compgen -G "$regressions/*" >/dev/null; then
        if "$fuzzer" -runs=1 "$regressions"/* >"$scratch/$t.replay.log" 2>&1; then
            echo "fuzz $t: $(ls "$regressions" | wc -l) regression inputs pass"
        else
            echo "fuzz $t: REGRESSION crashed"; tail -n 30 "$scratch/$t.replay.log"; failed=1
        fi
    fi
    [ "$seconds" -gt 0 ] || continue
    mkdir -p "$scratch/$t" "$bin_dir/artifacts/$t"
    cp tests/fuzz/corpus/"$t"/* "$scratch/$t"/
    log=$scratch/$t.log
    if "$fuzzer" -max_total_time="$seconds" -max_len="$(max_len "$t")" -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$bin_dir/artifacts/$t/" "$scratch/$t" >"$log" 2>&1; then
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
        echo "fuzz $t: ${runs:-?} executions in ${seconds} s, no crash"
    else
        echo "fuzz $t: CRASH (input kept in $bin_dir/artifacts/$t/)"; grep -A 30 "ERROR\|==.*==" "$log" | head -n 40
        failed=1
    fi
done
exit $failed
