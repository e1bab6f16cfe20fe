#!/usr/bin/env bash
# The regression sweep on the CPU (plus Vulkan when `convgrad run --target vulkan` works here),
# its report files, a 2-shard run + sweep-merge, and the exit status for bad input.
set -u
cd "$(dirname "$0")/.."
cg=./build/convgrad
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "test_sweep: $*"; exit 1; }
records() { grep -c . "$1/results.jsonl"; }

# CPU and Vulkan (lavapipe in CI, installed by make deps): a Vulkan failure fails the test.
targets=cpu,vulkan
echo "test_sweep: targets $targets"

# 1. The whole regression sweep. Its packs stay in out/sweep/ so that a rerun compiles nothing.
out=out/sweep/regression-test
start=$SECONDS
$cg sweep configs/sweeps/regression.json --target $targets --out $out 2>"$tmp/log"
rc=$?
tail -1 "$tmp/log"
[ $rc -eq 0 ] || { grep FAIL "$tmp/log" | head -20; fail "regression sweep exit $rc"; }
problems=$(grep -c '"target":"cpu"' $out/results.jsonl)
ntargets=$(echo $targets | tr , '\n' | grep -c .)
[ "$problems" -ge 150 ] || fail "only $problems cpu records"
[ "$(records $out)" -eq $((problems * ntargets)) ] || fail "record count $(records $out)"
grep -q '"pass":false' $out/results.jsonl && fail "a record failed with exit 0"
grep -q '"verified":false' $out/results.jsonl && fail "an unverified record"
[ -s $out/summary.md ] || fail "no summary.md"
grep -q "$problems passed\|$((problems * ntargets)) passed" $out/summary.md || fail "summary totals"
[ -s $out/plot.png ] && [ "$(head -c 4 $out/plot.png | tail -c 3)" = PNG ] || fail "no plot.png"
grep -q 'ETA' "$tmp/log" || fail "no progress line"
echo "test_sweep: regression: $problems problems x $ntargets targets in $((SECONDS - start)) s"

# 2. Two shards + merge give the same records as one run (a small grid keeps this quick).
cat > "$tmp/small.json" <<'JSON'
{"name": "small",
 "grids": [{"base": {"op": "bwd_data", "n": 1, "c": 4, "k": 4, "input": [6, 5], "filter": [3, 3]},
            "vary": {"op": ["bwd_data", "bwd_weight"], "stride": [1, 2], "groups": [1, 2, 3]},
            "skip": [{"op": "bwd_weight", "stride": 2, "groups": 2}]}]}
JSON
$cg sweep "$tmp/small.json" --out "$tmp/all" --quiet >/dev/null || fail "small sweep"
$cg sweep "$tmp/small.json" --out "$tmp/s0" --shard 0/2 --quiet >/dev/null || fail "shard 0"
$cg sweep "$tmp/small.json" --out "$tmp/s1" --shard 1/2 --quiet >/dev/null || fail "shard 1"
$cg sweep-merge "$tmp/merged" "$tmp/s0" "$tmp/s1" >/dev/null || fail "sweep-merge"
n=$(records "$tmp/all")
[ "$n" -eq 7 ] || fail "small sweep: $n records, want 7 (12 - 4 with groups 3 - 1 skipped)"
[ "$(records "$tmp/s0")" -eq 4 ] && [ "$(records "$tmp/s1")" -eq 3 ] || fail "uneven shards"
[ "$(records "$tmp/merged")" -eq "$n" ] || fail "merged $(records "$tmp/merged") != $n"
diff <(grep -o '"problem":"[^"]*"' "$tmp/all/results.jsonl" | sort) \
     <(grep -o '"problem":"[^"]*"' "$tmp/merged/results.jsonl" | sort) >/dev/null ||
    fail "merged problems differ"
[ -s "$tmp/merged/summary.md" ] && [ -s "$tmp/merged/plot.png" ] || fail "merged report"

# 3. Bad input: an invalid explicit problem, a bad grid key, bad options: exit 2.
echo '{"problems": [{"op": "bwd_data", "n": 1, "c": 3, "k": 4, "groups": 2, "input": [5, 5],
      "filter": [3, 3]}]}' > "$tmp/bad.json"
$cg sweep "$tmp/bad.json" --out "$tmp/bad" 2>"$tmp/err"
[ $? -eq 2 ] || fail "invalid problem: exit not 2"
grep -q 'problems\[0\]: groups' "$tmp/err" || fail "unclear message: $(cat "$tmp/err")"
echo '{"grids": [{"base": {"op": "fwd"}, "vary": {"strides": [1]}}]}' > "$tmp/bad2.json"
$cg sweep "$tmp/bad2.json" --out "$tmp/bad" 2>/dev/null
[ $? -eq 2 ] || fail "bad grid: exit not 2"
$cg sweep "$tmp/small.json" --shard 2/2 2>/dev/null
[ $? -eq 2 ] || fail "bad --shard: exit not 2"
$cg sweep "$tmp/missing.json" 2>/dev/null
[ $? -eq 2 ] || fail "missing file: exit not 2"
$cg sweep --help | grep -q 'usage: convgrad sweep' || fail "sweep --help"
$cg sweep-merge --help | grep -q 'usage: convgrad sweep-merge' || fail "sweep-merge --help"

# 4. A failing record gives exit 1: a target that cannot serve the problem is a failure.
# A target that cannot start (here: no device of that name) gives error records and exit 1.
CONVGRAD_VK_DEVICE=no-such-device $cg sweep "$tmp/small.json" --out "$tmp/vkfail" \
    --target vulkan --quiet >/dev/null 2>&1
rc=$?
[ $rc -eq 1 ] || fail "sweep on an unavailable target: exit $rc, want 1"
grep -q '"error"' "$tmp/vkfail/results.jsonl" || fail "no error in the records"

echo "test_sweep: ok"
