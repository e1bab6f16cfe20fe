#!/usr/bin/env bash
# Fault tests for the convgrad CLI: what happens when the world around it goes wrong.
#   (a) no compiler (CC names a missing file; PATH without clang) during gen --build and run
#   (b) a compiler that fails
#   (c) a pack whose kernels.so, a source file or the manifest was modified after build
#   (d) `convgrad run` killed with SIGKILL midway: no partial .npy under an output name
#   (e) four concurrent `convgrad run --target cpu` sharing an empty cache: all succeed with
#       identical outputs, one cache entry, built once
#   (f) an allocation failure (ulimit -v) is exit 1 with an "allocate" message, nothing written
#   (g) problems past documented limits are exit 2 with a one-line "limit" message
# Needs build/convgrad (make all), clang and python3-numpy. Runs in about a minute.
set -u
cd "$(dirname "$0")/.."
CG=$PWD/build/convgrad
PY=/usr/bin/python3
[ -x "$CG" ] || { echo "test_faults: build/convgrad missing (run make all)"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/convgrad_faults.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failures=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; failures=$((failures + 1)); }

# expect RC NAME REGEX CMD...: CMD exits RC and prints exactly one stderr line matching REGEX.
expect() {
    local want=$1 name=$2 pattern=$3
    shift 3
    "$@" >"$tmp/stdout" 2>"$tmp/stderr"
    local rc=$?
    local lines
    lines=$(wc -l <"$tmp/stderr")
    if [ "$rc" -eq "$want" ] && [ "$lines" -eq 1 ] && grep -Eq -- "$pattern" "$tmp/stderr"; then
        ok "$name: $(cat "$tmp/stderr")"
    else
        bad "$name: exit $rc (want $want), $lines stderr lines: $(head -c 600 "$tmp/stderr")"
    fi
}

# no_outputs NAME DIR: DIR holds no file at all.
no_outputs() {
    if [ -z "$(ls -A "$2" 2>/dev/null)" ]; then ok "$1: nothing written"; else
        bad "$1: wrote $(ls -A "$2" | tr '\n' ' ')"; fi
}

# A small problem for the compiled paths, with inputs.
cat >"$tmp/small.json" <<'JSON'
{"name": "faults_small", "op": "bwd_data", "n": 1, "c": 4, "k": 4, "input": [6, 7],
 "filter": [3, 3], "pad": [1, 1]}
JSON
mkdir -p "$tmp/in_small"
$PY -c "
import numpy as np, sys
r = np.random.default_rng(1)
np.save(sys.argv[1] + '/dy.npy', r.standard_normal((1, 4, 6, 7), dtype=np.float32))
np.save(sys.argv[1] + '/w.npy', r.standard_normal((4, 4, 3, 3), dtype=np.float32))
" "$tmp/in_small" || { echo "test_faults: needs python3-numpy"; exit 1; }

# ---- (a) missing compiler ------------------------------------------------------------------
expect 1 "gen --build with CC missing" '^convgrad: .*build failed: ' \
    env CC=/nonexistent/clang "$CG" gen "$tmp/small.json" -o "$tmp/pack_nocc" --isa generic --build
mkdir -p "$tmp/bin"
for tool in make sh bash mkdir mv rm cat sed; do
    path=$(command -v "$tool") && ln -sf "$path" "$tmp/bin/$tool"
done
expect 1 "run --target cpu with no clang on PATH" '^convgrad: .*build failed: ' \
    env -u CC PATH="$tmp/bin" CONVGRAD_CACHE="$tmp/cache_nocc" "$CG" run "$tmp/small.json" \
    --target cpu --inputs "$tmp/in_small" --outputs "$tmp/out_nocc"
no_outputs "run with no clang" "$tmp/out_nocc"

# ---- (b) a compiler that fails ------------------------------------------------------------
printf '#!/bin/sh\necho "fakecc: error: internal compiler error" >&2\nexit 1\n' >"$tmp/badcc"
chmod +x "$tmp/badcc"
expect 1 "gen --build with a failing compiler" '^convgrad: .*build failed: .*error' \
    env CC="$tmp/badcc" "$CG" gen "$tmp/small.json" -o "$tmp/pack_badcc" --isa generic --build
expect 1 "run --target cpu with a failing compiler" '^convgrad: .*build failed: .*error' \
    env CC="$tmp/badcc" CONVGRAD_CACHE="$tmp/cache_badcc" "$CG" run "$tmp/small.json" \
    --target cpu --inputs "$tmp/in_small" --outputs "$tmp/out_badcc"
no_outputs "run with a failing compiler" "$tmp/out_badcc"

# ---- (c) tampered pack --------------------------------------------------------------------
if "$CG" gen "$tmp/small.json" -o "$tmp/pack" --isa generic --build >/dev/null 2>"$tmp/err"; then
    expect 0 "untouched pack runs" '' sh -c "'$CG' run '$tmp/small.json' --target cpu \
        --pack '$tmp/pack' --inputs '$tmp/in_small' --outputs '$tmp/out_pack' && echo ran >&2"
    flip() { $PY -c "
import sys
p = sys.argv[1]; b = bytearray(open(p, 'rb').read()); b[len(b) // 2] ^= 0xff
open(p, 'wb').write(b)" "$1"; }
    cp -r "$tmp/pack" "$tmp/pack_so" && flip "$tmp/pack_so/kernels.so"
    expect 2 "tampered kernels.so" 'kernels\.so.*checksum' "$CG" run "$tmp/small.json" \
        --target cpu --pack "$tmp/pack_so" --inputs "$tmp/in_small" --outputs "$tmp/out_so"
    no_outputs "tampered kernels.so" "$tmp/out_so"
    cp -r "$tmp/pack" "$tmp/pack_src"
    src=$(ls "$tmp/pack_src"/src/*.c | head -n 1)
    flip "$src"
    expect 2 "tampered kernel source" "$(basename "$src").*checksum" "$CG" run \
        "$tmp/small.json" --target cpu --pack "$tmp/pack_src" --inputs "$tmp/in_small" \
        --outputs "$tmp/out_src"
    cp -r "$tmp/pack" "$tmp/pack_man"
    sed -i 's/"work_items":[[:space:]]*[0-9]*/"work_items": "many"/' "$tmp/pack_man/manifest.json"
    expect 2 "malformed manifest" 'manifest.*work_items' "$CG" run "$tmp/small.json" \
        --target cpu --pack "$tmp/pack_man" --inputs "$tmp/in_small" --outputs "$tmp/out_man"
    # a step marked paired must follow a lead step with the same work items (cgrt_run.c)
    cp -r "$tmp/pack" "$tmp/pack_pair"
    $PY -c "
import json, sys
p = sys.argv[1]; m = json.load(open(p))
for problem in m['problems']:
    for variant in problem.get('cpu', []): variant['steps'][0]['paired'] = True
json.dump(m, open(p, 'w'))" "$tmp/pack_pair/manifest.json"
    expect 2 "paired step without a lead" 'manifest.*paired with no lead step' "$CG" run \
        "$tmp/small.json" --target cpu --pack "$tmp/pack_pair" --inputs "$tmp/in_small" \
        --outputs "$tmp/out_pair"
    no_outputs "paired step without a lead" "$tmp/out_pair"
else
    bad "gen --build of the test pack failed: $(cat "$tmp/err")"
fi

# ---- (d) kill -9 midway: no partial output ------------------------------------------------
cat >"$tmp/big.json" <<'JSON'
{"name": "faults_big", "op": "bwd_weight", "n": 4, "c": 64, "k": 64, "input": [64, 64],
 "filter": [3, 3], "pad": [1, 1]}
JSON
mkdir -p "$tmp/in_big"
$PY -c "
import numpy as np, sys
r = np.random.default_rng(2)
for t in ('x', 'dy'):
    np.save(sys.argv[1] + '/' + t + '.npy', r.standard_normal((4, 64, 64, 64), dtype=np.float32))
" "$tmp/in_big"
for delay in 0.3 0.8 1.5; do
    out=$tmp/out_kill_$delay
    "$CG" run "$tmp/big.json" --target ref --inputs "$tmp/in_big" --outputs "$out" \
        >/dev/null 2>&1 &
    pid=$!
    sleep "$delay"
    how=killed
    kill -9 "$pid" 2>/dev/null || how="had finished"
    wait "$pid" 2>/dev/null
    partial=""
    for f in "$out"/*.npy; do
        [ -e "$f" ] || continue
        $PY -c "
import numpy as np, sys
assert np.load(sys.argv[1]).shape == (64, 64, 3, 3)" "$f" 2>/dev/null || partial="$partial $f"
    done
    if [ -z "$partial" ]; then
        ok "kill -9 after ${delay} s ($how): outputs hold only complete files ($(ls "$out" 2>/dev/null | tr '\n' ' '))"
    else bad "kill -9 after ${delay} s: partial output$partial"; fi
done

# ---- (e) concurrent runs sharing one empty cache ------------------------------------------
cat >"$tmp/conc.json" <<'JSON'
{"name": "faults_concurrent", "op": "bwd_data", "n": 2, "c": 5, "k": 3, "input": [9, 8],
 "filter": [3, 2], "stride": [2, 1], "pad": [1, 0]}
JSON
mkdir -p "$tmp/in_conc" "$tmp/cache_conc"
$PY -c "
import numpy as np, sys
r = np.random.default_rng(3)
np.save(sys.argv[1] + '/dy.npy', r.standard_normal((2, 3, 5, 7), dtype=np.float32))
np.save(sys.argv[1] + '/w.npy', r.standard_normal((3, 5, 3, 2), dtype=np.float32))
" "$tmp/in_conc"
pids=()
for i in 1 2 3 4; do
    CONVGRAD_CACHE="$tmp/cache_conc" "$CG" run "$tmp/conc.json" --target cpu \
        --inputs "$tmp/in_conc" --outputs "$tmp/out_conc_$i" 2>"$tmp/conc_err_$i" &
    pids+=($!)
done
conc_ok=1
for i in 1 2 3 4; do
    wait "${pids[$((i - 1))]}" || { conc_ok=0; bad "concurrent run $i: $(cat "$tmp/conc_err_$i")"; }
done
for i in 2 3 4; do
    cmp -s "$tmp/out_conc_1/dx.npy" "$tmp/out_conc_$i/dx.npy" ||
        { conc_ok=0; bad "concurrent run $i: dx.npy differs from run 1"; }
done
entries=$(find "$tmp/cache_conc" -mindepth 1 -maxdepth 1 -type d | wc -l)
libs=$(find "$tmp/cache_conc" -name 'kernels.so*' | wc -l)
[ "$entries" -eq 1 ] && [ "$libs" -eq 1 ] ||
    { conc_ok=0; bad "concurrent runs: $entries cache entries, $libs kernels.so* files"; }
[ "$conc_ok" -eq 1 ] && ok "4 concurrent runs: identical dx.npy, one cache entry, one kernels.so"

# ---- (f) allocation failure ---------------------------------------------------------------
# dx of this problem is 32 x 4096 x 4096 f32 = 2 GiB while dy and w are tiny, so the run gets
# past reading its inputs and fails allocating its output under a 1 GiB address-space limit.
cat >"$tmp/oom.json" <<'JSON'
{"name": "faults_oom", "op": "bwd_data", "n": 1, "c": 32, "k": 1, "input": [4096, 4096],
 "filter": [1, 1], "stride": [64, 64]}
JSON
mkdir -p "$tmp/in_oom"
$PY -c "
import numpy as np, sys
np.save(sys.argv[1] + '/dy.npy', np.ones((1, 1, 64, 64), dtype=np.float32))
np.save(sys.argv[1] + '/w.npy', np.ones((1, 32, 1, 1), dtype=np.float32))
" "$tmp/in_oom"
for target in ref cpu; do
    expect 1 "allocation failure (--target $target)" 'allocate' sh -c "ulimit -v 1048576; \
        CONVGRAD_CACHE='$tmp/cache_oom' exec '$CG' run '$tmp/oom.json' --target $target \
        --inputs '$tmp/in_oom' --outputs '$tmp/out_oom_$target'"
    no_outputs "allocation failure (--target $target)" "$tmp/out_oom_$target"
done

# ---- (g) documented limits ----------------------------------------------------------------
limit_case() { # NAME JSON COMMAND...
    local name=$1 json=$2
    shift 2
    printf '%s\n' "$json" >"$tmp/limit.json"
    expect 2 "limit: $name" 'limit' "$@" "$tmp/limit.json"
}
limit_case "tensor elements > 2^31-1" \
    '{"op":"bwd_data","n":1,"c":65536,"k":1,"input":[32768],"filter":[1]}' "$CG" plan
limit_case "extent > 2^24" \
    '{"op":"bwd_data","n":1,"c":1,"k":1,"input":[16777217],"filter":[1]}' "$CG" plan
limit_case "filter extent > 64" \
    '{"op":"bwd_data","n":1,"c":1,"k":1,"input":[80],"filter":[65],"pad":[40]}' "$CG" plan
limit_case "filter taps > 1024" \
    '{"op":"bwd_data","n":1,"c":1,"k":1,"input":[40,40,40],"filter":[11,11,11],"pad":[5,5,5]}' \
    "$CG" plan
# Stride phases: a stride-64 filter of 64 taps has 64 phases, more steps than a plan holds.
printf '%s\n' '{"op":"bwd_data","n":1,"c":1,"k":1,"input":[2000],"filter":[64],"stride":[64]}' \
    >"$tmp/phases.json"
expect 2 "limit: stride phases" 'limit|too many' "$CG" plan "$tmp/phases.json"

echo "test_faults: $failures failed"
[ "$failures" -eq 0 ]
