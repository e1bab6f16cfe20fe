#!/usr/bin/env bash
# test_cli.sh: the `convgrad` command line end to end, on small problems.
#
#   - `convgrad run` with --target ref and --target cpu: outputs exist with the problem's shape
#     and dtype and agree within cg_reference_tolerance()'s rule;
#   - every class of bad input: exit 2, exactly one stderr line "convgrad: ..." naming the file,
#     nothing written (the --outputs directory is neither created nor changed);
#   - --help of every subcommand, unknown command;
#   - `convgrad import` of the seed MIOpen lines -> JSON that `convgrad plan` accepts;
#   - caching: a second run does not need clang (PATH without it), `gen` twice rewrites no
#     source and `build` then recompiles nothing; other compile flags from the environment
#     (OPT_<isa>) rebuild what they change, once.
#
# Run from anywhere after `make all`; numpy comes from /usr/bin/python3. Exit 1 on any failure.
set -u
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
CG=$ROOT/build/convgrad
PY=/usr/bin/python3
T=$(mktemp -d "${TMPDIR:-/tmp}/cg-test-cli.XXXXXX")
trap 'rm -rf "$T"' EXIT
# A private kernel cache, so that the first cpu run really builds and the second really reuses.
export CONVGRAD_CACHE=$T/cache

passed=0
failed=0
pass() { passed=$((passed + 1)); echo "[PASS] $1"; }
fail() { failed=$((failed + 1)); echo "[FAIL] $1${2:+: $2}"; }
# check DESCRIPTION COMMAND...: passes when the command succeeds.
check() {
    local desc=$1
    shift
    if "$@"; then pass "$desc"; else fail "$desc"; fi
}
# quiet COMMAND...: runs it with its output shown only on failure.
quiet() {
    if "$@" >"$T/quiet" 2>&1; then return 0; fi
    sed 's/^/    /' "$T/quiet"
    return 1
}

if [ ! -x "$CG" ]; then
    echo "[FAIL] $CG is missing (run make all)"
    echo "test_cli: 0 passed, 1 failed"
    exit 1
fi

# Python helpers (geometry, .npy dtypes, tolerance) shared with tests/test_torch.py.
py() { "$PY" -c "import sys; sys.path.insert(0, '$ROOT/tests'); from test_torch import *; $1" \
    "${@:2}"; }

# make_inputs CONFIG NAME DIR: random inputs for problem NAME of CONFIG ('' = the only one).
make_inputs() {
    py '
config, name, out = sys.argv[1:4]
probs = load_problems(config)
p = [q for q in probs if not name or q.get("name") == name][0]
random_inputs(Geometry(p), out, np.random.default_rng(11))
' "$@"
}

# check_outputs CONFIG NAME DIR_A DIR_B: every wanted output exists in both with the right
# shape and dtype, no other file is there, and they agree within the tolerance.
check_outputs() {
    py '
config, name, a, b = sys.argv[1:5]
p = [q for q in load_problems(config) if not name or q.get("name") == name][0]
geo = Geometry(p)
bad = []
for d in (a, b):
    extra = sorted(set(os.listdir(d)) - {t + ".npy" for t in geo.outputs()})
    if extra:
        bad.append("%s holds unexpected files %s" % (d, extra))
for t in geo.outputs():
    try:
        got, want = load_output(geo, a, t), load_output(geo, b, t)
    except (OSError, ValueError) as e:
        bad.append(str(e))
        continue
    ok, err, scale = compare(got, want, geo.tolerance(t))
    print("    %s %s %s: max err %.3g, scale %.3g, tol %.3g" % (
        geo.name or "-", t, "x".join(map(str, geo.shape(t))), err, scale, geo.tolerance(t)))
    if not ok:
        bad.append("%s: cpu and ref differ" % t)
for line in bad:
    print("    " + line)
sys.exit(1 if bad else 0)
' "$@"
}

# listing DIR: names, sizes, mtimes and checksums of everything under DIR ("absent" if none).
listing() {
    if [ -e "$1" ]; then
        (cd "$1" && find . -printf '%p %s %T@\n' | sort && find . -type f -exec md5sum {} + | sort)
    else
        echo absent
    fi
}

# ---------------------------------------------------------------------------------------------
echo "== run: ref and cpu agree, outputs well-formed"
cat >"$T/multi.json" <<'EOF'
{"problems": [
 {"name": "p2d", "op": ["fwd", "bwd_data", "bwd_weight", "bwd_bias"], "layout": "NCHW",
  "n": 2, "c": 4, "k": 6, "groups": 2, "input": [7, 6], "filter": [3, 2], "stride": [2, 1],
  "pad_lo": [1, 0], "pad_hi": [0, 1]},
 {"name": "p3d_bf16", "op": ["bwd_weight", "bwd_bias"], "dtype": "bf16", "layout": "NDHWC",
  "n": 1, "c": 3, "k": 3, "groups": 3, "input": [4, 5, 3], "filter": [2, 2, 1], "pad": [1, 0, 0]}
]}
EOF
"$PY" -c '
import json, sys
for p in json.load(open(sys.argv[1]))["problems"]:
    json.dump(p, open("%s/%s.json" % (sys.argv[2], p["name"]), "w"))
' "$T/multi.json" "$T"
cp configs/examples/ex_1d_f16.json "$T/ex_1d_f16.json"
for name in p2d p3d_bf16 ex_1d_f16; do
    cfg=$T/$name.json
    make_inputs "$cfg" "" "$T/in_$name"
    check "run $name --target ref exits 0" "$CG" run "$cfg" --target ref --inputs "$T/in_$name" \
        --outputs "$T/ref_$name"
    check "run $name --target cpu exits 0 (first run builds the cache)" "$CG" run "$cfg" \
        --target cpu --inputs "$T/in_$name" --outputs "$T/cpu_$name"
    check "run $name: cpu and ref outputs have the right shape/dtype and agree" \
        check_outputs "$cfg" "" "$T/cpu_$name" "$T/ref_$name"
done
check "run --name p2d on the multi-problem config" "$CG" run "$T/multi.json" --name p2d \
    --target cpu --inputs "$T/in_p2d" --outputs "$T/cpu_multi_p2d"
check "run --name p2d: outputs agree with the reference" \
    check_outputs "$T/multi.json" p2d "$T/cpu_multi_p2d" "$T/ref_p2d"

# ---------------------------------------------------------------------------------------------
echo "== run: a second run reuses the cache (no clang, nothing rebuilt)"
before=$(listing "$CONVGRAD_CACHE")
# A PATH with none of the tools a build needs: a rebuild could not even start.
mkdir -p "$T/emptybin"
start=$(date +%s%N)
PATH=$T/emptybin "$CG" run "$T/p2d.json" --target cpu --inputs "$T/in_p2d" \
    --outputs "$T/cpu_p2d_again" 2>"$T/err"
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
if [ $rc -eq 0 ]; then pass "second run with PATH stripped of clang/make succeeds (${ms} ms)"
else fail "second run with PATH stripped of clang/make" "exit $rc: $(head -c 300 "$T/err")"; fi
check "second run: cache files and mtimes unchanged" test "$before" = "$(listing "$CONVGRAD_CACHE")"
check "second run: same result" cmp -s "$T/cpu_p2d/dx.npy" "$T/cpu_p2d_again/dx.npy"
# Another template tree (a copy of templates/ elsewhere) is another cache entry: the binary
# must not hand the first tree's kernels to a run that reads the second.
entries=$(ls "$CONVGRAD_CACHE" | wc -l)
mkdir -p "$T/tree" && cp -r templates "$T/tree/templates"
check "run with CONVGRAD_TEMPLATES=another tree exits 0" env CONVGRAD_TEMPLATES="$T/tree/templates" \
    "$CG" run "$T/p2d.json" --target cpu --inputs "$T/in_p2d" --outputs "$T/cpu_p2d_tree"
check "another template tree: a new cache entry" test "$(ls "$CONVGRAD_CACHE" | wc -l)" -eq $((entries + 1))
check "another template tree: same result" cmp -s "$T/cpu_p2d/dx.npy" "$T/cpu_p2d_tree/dx.npy"

# ---------------------------------------------------------------------------------------------
echo "== run: bad input -> exit 2, one line 'convgrad: ...' naming the file, nothing written"
good=$T/in_p2d
# expect_bad DESCRIPTION NAMED ARGS...: runs `convgrad run ARGS --outputs DIR` twice, once with
# DIR absent (must stay absent) and once with DIR holding an old file (must stay unchanged).
expect_bad() {
    local desc=$1 named=$2 round out rc lines first why
    shift 2
    for round in absent existing; do
        out=$T/bad_out_$round
        rm -rf "$out"
        if [ $round = existing ]; then mkdir -p "$out" && echo old >"$out/dx.npy"; fi
        local before_out before_cache
        before_out=$(listing "$out")
        before_cache=$(listing "$CONVGRAD_CACHE")
        "$CG" run "$@" --outputs "$out" >"$T/out" 2>"$T/err"
        rc=$?
        lines=$(wc -l <"$T/err")
        first=$(head -n 1 "$T/err")
        why=""
        [ $rc -eq 2 ] || why="exit $rc, want 2"
        [ -z "$why" ] && [ "$lines" -ne 1 ] && why="$lines lines on stderr, want 1"
        [ -z "$why" ] && [ "${first#convgrad: }" = "$first" ] && why="line does not start 'convgrad: '"
        [ -z "$why" ] && [[ "$first" != *"$named"* ]] && why="line does not name '$named'"
        [ -z "$why" ] && [ -s "$T/out" ] && why="wrote to stdout"
        [ -z "$why" ] && [ "$before_out" != "$(listing "$out")" ] && why="--outputs ($round) changed"
        [ -z "$why" ] && [ "$before_cache" != "$(listing "$CONVGRAD_CACHE")" ] && why="cache changed"
        if [ -n "$why" ]; then
            fail "$desc [outputs $round]" "$why; stderr: $(head -c 300 "$T/err")"
            return
        fi
    done
    pass "$desc: $first"
}
# bad_inputs NAME PYTHON: a copy of the good inputs in $T/bad_NAME, then PYTHON run in it.
bad_inputs() {
    rm -rf "$T/bad_$1"
    cp -r "$good" "$T/bad_$1"
    (cd "$T/bad_$1" && "$PY" -c "import numpy as np, os; $2")
}
p2d=$T/p2d.json

bad_inputs missing 'os.remove("w.npy")'
expect_bad "missing input file" "bad_missing/w.npy" "$p2d" --target cpu --inputs "$T/bad_missing"
bad_inputs trunc 'b = open("dy.npy", "rb").read(); open("dy.npy", "wb").write(b[:-7])'
expect_bad "truncated .npy" "bad_trunc/dy.npy" "$p2d" --target cpu --inputs "$T/bad_trunc"
bad_inputs trunc_hdr 'b = open("x.npy", "rb").read(); open("x.npy", "wb").write(b[:40])'
expect_bad "truncated .npy header" "bad_trunc_hdr/x.npy" "$p2d" --target ref \
    --inputs "$T/bad_trunc_hdr"
bad_inputs magic 'b = open("x.npy", "rb").read(); open("x.npy", "wb").write(b"\x93NUMPZ" + b[6:])'
expect_bad "bad .npy magic" "bad_magic/x.npy" "$p2d" --target cpu --inputs "$T/bad_magic"
bad_inputs empty 'open("dy.npy", "wb").close()'
expect_bad "empty .npy" "bad_empty/dy.npy" "$p2d" --target cpu --inputs "$T/bad_empty"
bad_inputs f8 'np.save("w.npy", np.load("w.npy").astype("<f8"))'
expect_bad "wrong dtype <f8" "bad_f8/w.npy" "$p2d" --target cpu --inputs "$T/bad_f8"
bad_inputs f2 'np.save("x.npy", np.load("x.npy").astype("<f2"))'
expect_bad "wrong dtype <f2 for an f32 problem" "bad_f2/x.npy" "$p2d" --target ref \
    --inputs "$T/bad_f2"
bad_inputs big '
a = np.load("dy.npy"); np.save("dy.npy", a.astype(">f4"))'
expect_bad "big-endian >f4" "bad_big/dy.npy" "$p2d" --target cpu --inputs "$T/bad_big"
bad_inputs shape 'a = np.load("dy.npy"); np.save("dy.npy", np.zeros(a.shape[:-1] + (a.shape[-1] + 1,), "<f4"))'
expect_bad "wrong shape" "bad_shape/dy.npy" "$p2d" --target cpu --inputs "$T/bad_shape"
bad_inputs rank 'a = np.load("w.npy"); np.save("w.npy", a.reshape(a.shape[0], -1))'
expect_bad "wrong rank" "bad_rank/w.npy" "$p2d" --target ref --inputs "$T/bad_rank"
bad_inputs fortran 'a = np.load("x.npy"); np.save("x.npy", np.asfortranarray(a))'
expect_bad "Fortran order" "bad_fortran/x.npy" "$p2d" --target cpu --inputs "$T/bad_fortran"

echo '{"op": "bwd_data", "n": 1, "c": 4, "k": 4, "input": [5, 5], "filter": [3, 3], "colour": 1}' \
    >"$T/unknown_key.json"
expect_bad "problem JSON with an unknown key" "unknown_key.json" "$T/unknown_key.json" \
    --target cpu --inputs "$good"
echo '{"op": "bwd_data", "n": 1, "c": 5, "k": 4, "groups": 2, "input": [5, 5], "filter": [3, 3]}' \
    >"$T/groups.json"
expect_bad "problem JSON: groups not dividing c" "groups.json" "$T/groups.json" --target cpu \
    --inputs "$good"
echo '{"op": "bwd_data", "n": 1, "c": 4,' >"$T/syntax.json"
expect_bad "problem JSON: syntax error" "syntax.json" "$T/syntax.json" --target cpu --inputs "$good"
echo '{"op": "bwd_data", "n": 1, "c": 4, "k": 4, "input": [2, 2], "filter": [3, 3]}' \
    >"$T/too_small.json"
expect_bad "problem JSON: output size < 1" "too_small.json" "$T/too_small.json" --target cpu \
    --inputs "$good"
expect_bad "nonexistent problem file" "no_such_problem.json" "$T/no_such_problem.json" \
    --target cpu --inputs "$good"
expect_bad "multi-problem config without --name" "multi.json" "$T/multi.json" --target cpu \
    --inputs "$good"
expect_bad "multi-problem config, unknown --name" "multi.json" "$T/multi.json" --name nope \
    --target cpu --inputs "$good"
expect_bad "unknown --target" "gpu" "$p2d" --target gpu --inputs "$good"
expect_bad "missing --inputs" "--inputs" "$p2d" --target cpu

# ---------------------------------------------------------------------------------------------
echo "== --help and unknown commands"
for cmd in gen build run bench sweep sweep-merge plan import; do
    "$CG" "$cmd" --help >"$T/out" 2>"$T/err"
    rc=$?
    if [ $rc -eq 0 ] && grep -q "usage: convgrad $cmd" "$T/out"; then pass "convgrad $cmd --help"
    else fail "convgrad $cmd --help" "exit $rc: $(head -c 200 "$T/out" "$T/err")"; fi
done
"$CG" --help >"$T/out" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q "^usage: convgrad" "$T/out"; then pass "convgrad --help"
else fail "convgrad --help" "exit $rc"; fi
"$CG" frobnicate >"$T/out" 2>"$T/err"
rc=$?
if [ $rc -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "^convgrad: .*frobnicate" "$T/err"
then pass "unknown command exits 2 with one line"
else fail "unknown command" "exit $rc: $(cat "$T/err")"; fi

# ---------------------------------------------------------------------------------------------
echo "== import: seed MIOpen lines -> JSON that plan accepts"
n_import=0
while IFS= read -r line; do
    n_import=$((n_import + 1))
    json=$T/import_$n_import.json
    if ! "$CG" import "$line" >"$json" 2>"$T/err"; then
        fail "import seed line $n_import" "$(cat "$T/err"): $line"
        continue
    fi
    if "$CG" plan "$json" >"$T/plan.json" 2>"$T/err" &&
        "$PY" -c 'import json, sys; json.JSONDecoder().raw_decode(open(sys.argv[1]).read())' \
            "$T/plan.json"; then
        pass "import + plan: ${line:0:70}"
    else
        fail "plan of imported seed line $n_import" "$(cat "$T/err"): $line"
    fi
done < <(grep -o '`conv[a-z0-9]* -[^`]*`' configs/seeds/README.md | tr -d '`')
check "found the seed MIOpen lines in configs/seeds/README.md" test "$n_import" -ge 10

# ---------------------------------------------------------------------------------------------
echo "== gen twice rewrites nothing, build then recompiles nothing"
pack=$T/pack
if "$CG" gen configs/examples/ex_strided_asym_pad.json -o "$pack" --build >"$T/out" 2>&1; then
    pass "gen --build ex_strided_asym_pad"
else
    fail "gen --build ex_strided_asym_pad" "$(cat "$T/out")"
fi
stamps() { (cd "$pack" && find src obj -type f -printf '%p %T@\n' 2>/dev/null | sort); }
src_before=$(cd "$pack" && find src -name '*.c' -printf '%p %T@\n' | sort)
all_before=$(stamps)
check "pack has sources and objects" test -n "$(ls "$pack"/src/*.c "$pack"/obj/*.o 2>/dev/null)"
check "gen again exits 0" quiet "$CG" gen configs/examples/ex_strided_asym_pad.json -o "$pack"
check "gen again: src/*.c mtimes unchanged" \
    test "$src_before" = "$(cd "$pack" && find src -name '*.c' -printf '%p %T@\n' | sort)"
check "build again exits 0" quiet "$CG" build "$pack"
check "build again: obj/*.o mtimes unchanged (nothing recompiled)" test "$all_before" = "$(stamps)"
make_inputs configs/examples/ex_strided_asym_pad.json "" "$T/in_strided"
check "run --pack on that pack" "$CG" run configs/examples/ex_strided_asym_pad.json \
    --target cpu --pack "$pack" --inputs "$T/in_strided" --outputs "$T/out_strided"
check "build again: still nothing recompiled after a run" test "$all_before" = "$(stamps)"
# Other flags from the environment (OPT_<isa>: -O1 for the ISA kernels) rebuild the ISA's
# precompiled header and objects (clang refuses a header built at another -O level); the
# same flags again rebuild nothing, and the pack still runs.
isa_objects() { (cd "$pack" && find obj -name '*__avx*.o' -printf '%p %T@\n' | sort); }
at_o1() { env OPT_avx2=-O1 OPT_avx512=-O1 OPT_avx512bf16=-O1 "$@"; }
o3_objects=$(isa_objects)
check "build with OPT_<isa>=-O1 exits 0" quiet at_o1 "$CG" build "$pack"
o1_objects=$(isa_objects)
check "OPT_<isa>=-O1: the ISA kernels recompiled" test -z "$o3_objects" -o "$o3_objects" != "$o1_objects"
check "build with -O1 again exits 0" quiet at_o1 "$CG" build "$pack"
check "-O1 again: nothing recompiled" test "$o1_objects" = "$(isa_objects)"
check "run --pack after the -O1 rebuild" "$CG" run configs/examples/ex_strided_asym_pad.json \
    --target cpu --pack "$pack" --inputs "$T/in_strided" --outputs "$T/out_strided_o1"

# ---------------------------------------------------------------------------------------------
echo "== kernels with the same code under two names are compiled once"
# f16 and bf16 NCHW stride-2 dx: their phase kernels work on f32 channels-last views (the
# tensors reordered in and out; NHWC ones now store dx in its own type), so the second
# problem's are twins of the first's; each twin's source calls its first copy, and both
# problems still agree with the reference.
cat >"$T/twins.json" <<'EOF2'
{"problems": [
 {"name": "tw_f16", "op": "bwd_data", "dtype": "f16", "layout": "NCHW", "n": 2, "c": 20,
  "k": 18, "input": [9, 10], "filter": [3, 3], "stride": [2, 2], "pad": [1, 1]},
 {"name": "tw_bf16", "op": "bwd_data", "dtype": "bf16", "layout": "NCHW", "n": 2, "c": 20,
  "k": 18, "input": [9, 10], "filter": [3, 3], "stride": [2, 2], "pad": [1, 1]}
]}
EOF2
twins=$T/twins
# plan_isa CONFIG NAME: the ISA gen plans problem NAME for on this CPU (its best).
plan_isa() { "$CG" plan "$1" --name "$2" | py 'import json
print(json.JSONDecoder().raw_decode(sys.stdin.read())[0]["target"]["isa"])'; }
twins_isa=$(plan_isa "$T/twins.json" tw_f16)
check "gen --build of two problems sharing kernels ($twins_isa)" quiet "$CG" gen \
    "$T/twins.json" -o "$twins" --isa "$twins_isa" --build
calls=$(grep -l '^ \* code: *the same as' "$twins"/src/cg_bf16_*.c 2>/dev/null | wc -l)
firsts=$(grep -L '^ \* code: *the same as' "$twins"/src/cg_f16_*.c 2>/dev/null | wc -l)
check "the bf16 problem's phase kernels call the f16 ones ($calls calls)" test "$calls" -ge 4
check "the f16 problem's kernels hold their code ($firsts)" test "$firsts" -ge 4
twin_ok=1
for f in $(grep -l '^ \* code: *the same as' "$twins"/src/*.c); do
    first=$(sed -n 's/^ \* code: *the same as \([a-z0-9_]*\), which this calls$/\1/p' "$f")
    [ -n "$first" ] && [ -e "$twins/src/$first.c" ] &&
        ! grep -q 'the same as' "$twins/src/$first.c" || twin_ok=0
done
check "every call names a kernel of the pack that holds code" test "$twin_ok" = 1
for name in tw_f16 tw_bf16; do
    make_inputs "$T/twins.json" "$name" "$T/in_$name"
    check "run $name --target cpu --pack" quiet "$CG" run "$T/twins.json" --name "$name" \
        --target cpu --pack "$twins" --inputs "$T/in_$name" --outputs "$T/cpu_$name"
    check "run $name --target ref" quiet "$CG" run "$T/twins.json" --name "$name" --target ref \
        --inputs "$T/in_$name" --outputs "$T/ref_$name"
    check "$name: cpu agrees with the reference" \
        check_outputs "$T/twins.json" "$name" "$T/cpu_$name" "$T/ref_$name"
done

# ---------------------------------------------------------------------------------------------
echo "== avx512bf16: bf16 problems only, their stores by vcvtneps2bf16"
# The ISA differs from avx512 in the bf16 rounding alone, so only the bf16 problem gets a
# variant of it; its objects hold the AVX512_BF16 conversion (the Winograd dx stores whole
# vectors of its 40-pixel rows), and the runtime takes it first. The pack is built on any
# x86-64; its kernels run where the CPU has the ISA, and a CPU without says so (SKIP lines).
cat >"$T/bfisa.json" <<'EOF2'
{"problems": [
 {"name": "bf_rows", "op": "bwd_data", "dtype": "bf16", "layout": "NCHW", "n": 2, "c": 16,
  "k": 16, "input": [12, 40], "filter": [3, 3], "pad": [1, 1]},
 {"name": "f32_rows", "op": "bwd_data", "dtype": "f32", "layout": "NCHW", "n": 2, "c": 16,
  "k": 16, "input": [12, 40], "filter": [3, 3], "pad": [1, 1]}
]}
EOF2
bf=$T/bfisa
check "gen --isa avx512bf16,avx512 --build" quiet "$CG" gen "$T/bfisa.json" -o "$bf" \
    --isa avx512bf16,avx512 --build
variants() { py 'import json; m = json.load(open(sys.argv[1]))
print(" ".join(p["name"] + ":" + ",".join(v["isa"] for v in p["cpu"]) for p in m["problems"]))' "$1"; }
got=$(variants "$bf/manifest.json")
check "variants: bf_rows avx512 and avx512bf16, f32_rows avx512 alone ($got)" \
    test "$got" = "bf_rows:avx512,avx512bf16 f32_rows:avx512"
converts=$(for o in "$bf"/obj/*__avx512bf16.o; do objdump -d "$o"; done | grep -c vcvtneps2bf16)
plain=$(for o in "$bf"/obj/*__avx512.o; do objdump -d "$o"; done | grep -c vcvtneps2bf16)
check "the avx512bf16 objects round by vcvtneps2bf16 ($converts), the avx512 ones not ($plain)" \
    test "$converts" -gt 0 -a "$plain" -eq 0
calls=$(grep -l '^ \* code: *the same as cg_[a-z0-9_]*__avx512,' "$bf"/src/*__avx512bf16.c | wc -l)
wrong=$(grep -l '^ \* code: *the same as cg_[a-z0-9_]*__avx512bf16,' "$bf"/src/*__avx512.c | wc -l)
check "avx512bf16 kernels without bf16 stores call the avx512 copies ($calls), never back ($wrong)" \
    test "$calls" -ge 1 -a "$wrong" -eq 0
make_inputs "$T/bfisa.json" bf_rows "$T/in_bf_rows"
check "run bf_rows --target ref" quiet "$CG" run "$T/bfisa.json" --name bf_rows --target ref \
    --inputs "$T/in_bf_rows" --outputs "$T/ref_bf_rows"
bf_host=$(plan_isa "$T/bfisa.json" bf_rows) # avx512bf16, avx512 or below
case $bf_host in
avx512bf16) bf_runs="avx512bf16 avx512" ;;
avx512) bf_runs="avx512" ;;
*) bf_runs="" ;;
esac
for isa in avx512bf16 avx512; do
    case " $bf_runs " in
    *" $isa "*) ;;
    *) echo "[SKIP] run bf_rows --isa $isa: this CPU cannot run $isa kernels"; continue ;;
    esac
    check "run bf_rows --isa $isa --pack" quiet "$CG" run "$T/bfisa.json" --name bf_rows \
        --target cpu --pack "$bf" --isa "$isa" --inputs "$T/in_bf_rows" --outputs "$T/bf_$isa"
    check "bf_rows on $isa agrees with the reference" \
        check_outputs "$T/bfisa.json" bf_rows "$T/bf_$isa" "$T/ref_bf_rows"
done
if [ "$bf_host" = avx512bf16 ]; then
    check "bench picks avx512bf16 for bf_rows" sh -c "'$CG' bench '$T/bfisa.json' --target cpu \
        --pack '$bf' --name bf_rows --reps 1 --min-ms 1 --json | grep -q '\"isa\": \"avx512bf16\"'"
    make_inputs "$T/bfisa.json" f32_rows "$T/in_f32_rows"
    check "run --isa avx512bf16 of an f32 problem takes its avx512 kernels" quiet "$CG" run \
        "$T/bfisa.json" --name f32_rows --target cpu --pack "$bf" --isa avx512bf16 \
        --inputs "$T/in_f32_rows" --outputs "$T/f32_rows_bf16isa"
else
    echo "[SKIP] bench and run --isa avx512bf16 on the pack: this CPU has no AVX512_BF16"
fi

# bench/run.sh times oneDNN on bench/shapes.txt, bench/compare.py on configs/bench/all.json's
# problems as `sweep --list` names them: the two lists must be the same shapes.
check "bench/shapes.txt lists configs/bench/all.json's shapes" sh -c "grep -v '^#' \
    '$ROOT/bench/shapes.txt' | awk 'NF >= 2 {print \$1, \$2}' > '$T/shapes_txt' && \
    '$CG' sweep '$ROOT/configs/bench/all.json' --list > '$T/shapes_list' && \
    cmp -s '$T/shapes_txt' '$T/shapes_list'"
echo "test_cli: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
