#!/usr/bin/env bash
# test_tune.sh: `convgrad tune` and the tuning database, end to end on tiny problems.
#
#   - tune writes an entry keyed PROBLEM|ISA|THREADS with overrides, heuristic_ms, tuned_ms,
#     date, cpu, generator; a second tune merges (the first entry stays);
#   - gen, plan, run and bench consult the database: the plan dump, the manifest and bench
#     --json say tuned, the pack carries tuning.json under its checksums (a modified copy is
#     refused); --no-tuning ignores the database; --plan FILE beats it; $CONVGRAD_TUNING_DB and
#     the default location ($XDG_CACHE_HOME/convgrad/tuning.json) are found;
#   - a damaged --db: exit 2, one line, nothing written; a damaged default database: a warning;
#   - --help, bad arguments.
#
# Fast (tiny problems, budgets of a few seconds). Exit 1 on any failure.
set -u
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
CG=$ROOT/build/convgrad
PY=/usr/bin/python3
T=$(mktemp -d "${TMPDIR:-/tmp}/cg-test-tune.XXXXXX")
trap 'rm -rf "$T"' EXIT
# A private kernel cache and a private default database location: nothing of the user's.
export CONVGRAD_CACHE=$T/cache XDG_CACHE_HOME=$T/xdg
unset CONVGRAD_TUNING_DB

passed=0
failed=0
pass() { passed=$((passed + 1)); echo "[PASS] $1"; }
fail() { failed=$((failed + 1)); echo "[FAIL] $1${2:+: $2}"; }
check() {
    local desc=$1
    shift
    if "$@" >"$T/check.out" 2>&1; then pass "$desc"; else fail "$desc" "$(head -c 400 "$T/check.out")"; fi
}
listing() { if [ -e "$1" ]; then (cd "$1" && find . -printf '%p %s %T@\n' | sort); else echo absent; fi; }

if [ ! -x "$CG" ]; then
    echo "[FAIL] $CG is missing (run make all)"
    exit 1
fi

cat >"$T/tiny.json" <<'EOF'
{"name": "tiny", "op": ["bwd_weight", "bwd_bias"], "layout": "NHWC",
 "n": 2, "c": 16, "k": 32, "input": [8, 8], "filter": [3, 3], "pad": [1, 1]}
EOF
cat >"$T/tiny2.json" <<'EOF'
{"name": "tiny2", "op": "bwd_data", "layout": "NHWC",
 "n": 1, "c": 16, "k": 16, "input": [9, 9], "filter": [3, 3], "stride": [2, 2]}
EOF
ISA=$("$CG" plan "$T/tiny.json" | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["target"]["isa"])')
THREADS=$(nproc)
FAST=(--target cpu --budget-s 4 --reps 3 --min-ms 2)

# ---------------------------------------------------------------------------------------------
echo "== tune writes a database entry"
DB=$T/db/tuning.json
"$CG" tune "$T/tiny.json" "${FAST[@]}" --db "$DB" >"$T/out" 2>"$T/err"
rc=$?
if [ $rc -eq 0 ]; then pass "tune tiny exits 0"; else fail "tune tiny" "exit $rc: $(tail -n 5 "$T/err")"; fi
check "progress lines 'tune [i/n] ...: X ms' on stderr" grep -Eq '^tune \[1/[0-9]+\] heuristic: [0-9.]+ ms$' "$T/err"
check "summary row on stdout" grep -Eq "^tiny +$ISA +$THREADS " "$T/out"
check "entry keyed PROBLEM|ISA|THREADS with overrides, heuristic_ms, tuned_ms, date, cpu" \
    "$PY" - "$DB" "$ISA" "$THREADS" <<'EOF'
import json, sys
db = json.load(open(sys.argv[1]))
assert db["schema"] == 1, db
(key, e), = db["entries"].items()
canonical, isa, threads = key.split("|")
assert canonical.startswith("bwdw-bwdb_f32_nhwc_g1mb2ic16oc32_i8x8"), key
assert isa == sys.argv[2] and threads == sys.argv[3], key
assert set(e) == {"overrides", "heuristic_ms", "tuned_ms", "date", "cpu", "generator"}, e
assert set(e["overrides"]) <= {"mr", "nv", "splits"}, e
assert e["heuristic_ms"] > 0 and 0 < e["tuned_ms"] <= e["heuristic_ms"], e
assert e["date"].endswith("Z") and e["cpu"], e
EOF
"$CG" tune "$T/tiny2.json" "${FAST[@]}" --db "$DB" --json >"$T/out2" 2>"$T/err2"
check "a second tune (--json) exits 0 with one JSON line" "$PY" -c '
import json, sys; lines = open(sys.argv[1]).read().splitlines(); assert len(lines) == 1
r = json.loads(lines[0]); assert r["name"] == "tiny2" and r["candidates"][0]["state"] == "ok"
' "$T/out2"
check "the second tune merges: both entries are there" "$PY" -c '
import json, sys; assert len(json.load(open(sys.argv[1]))["entries"]) == 2' "$DB"

# Give the tiny entry known overrides, so that what gen picks up is visible in its plans.
"$PY" - "$DB" <<'EOF'
import json, sys
db = json.load(open(sys.argv[1]))
for key, e in db["entries"].items():
    if "_g1mb2ic16oc32_" in key:
        e["overrides"] = {"mr": 3, "splits": 2}
json.dump(db, open(sys.argv[1], "w"), indent=1)
EOF

# plan_of PACK: "tuned mr splits" of the tiny problem's plan in a pack.
plan_of() {
    "$PY" - "$1/plans/tiny__$ISA.json" "$1/manifest.json" <<'EOF'
import json, sys
plan, manifest = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
step = [s for s in plan["steps"] if s["kind"] in ("dw_partial", "wino_dw")][0]  # Winograd dw: 16, 32 channels
variant = [v for v in manifest["problems"][0]["cpu"] if v["isa"] == plan["target"]["isa"]][0]
assert variant["tuned"] == plan["target"]["tuned"], (variant, plan["target"])
print(str(plan["target"]["tuned"]).lower(), step["mr"], step["splits"])
EOF
}

# ---------------------------------------------------------------------------------------------
echo "== gen consults the database (precedence: --plan > database > heuristics)"
check "gen --db --build" "$CG" gen "$T/tiny.json" -o "$T/pack" --isa "$ISA" --db "$DB" --build
got=$(plan_of "$T/pack")
if [ "$got" = "true 3 2" ]; then pass "plans/ and manifest: tuned, mr=3 splits=2 ($got)"
else fail "gen picks the entry up" "got '$got', want 'true 3 2'"; fi
check "pack holds tuning.json, named and checksummed in the manifest" "$PY" - "$T/pack" <<'EOF'
import hashlib, json, sys
d = sys.argv[1]; m = json.load(open(d + "/manifest.json")); t = json.load(open(d + "/tuning.json"))
assert m["tuning"] == "tuning.json"
assert m["files"]["tuning.json"] == hashlib.sha256(open(d + "/tuning.json", "rb").read()).hexdigest()
(entry,) = t["entries"].values()
assert entry["overrides"] == {"mr": 3, "splits": 2}, entry
EOF
"$CG" bench "$T/tiny.json" --pack "$T/pack" --isa "$ISA" --reps 2 --min-ms 0 --json >"$T/bench" 2>&1
check "bench --pack --json says \"tuned\": true" grep -q '"tuned": true' "$T/bench"
# the roofline's floor: the FLOPs at the peak, all bytes at the copy rate, the written bytes at
# the write rate, whichever is longest (peak and bandwidths pinned by their overrides; tiny's
# x 2x16x8x8 and dy 2x32x8x8 read, dw 32x16x3x3 and db 32 written, f32: 43136 bytes, 18560
# written, 2*2*32*16*64*9 FLOPs)
for rates in 1e6:0.004,0.001 1e6:0.004,1 0.001:1,1; do
    CONVGRAD_PEAK_GFLOPS=${rates%%:*} CONVGRAD_STREAM_GBPS=${rates#*:} "$CG" bench "$T/tiny.json" \
        --pack "$T/pack" --isa "$ISA" --reps 1 --min-ms 0 --json >"$T/roof" 2>&1
    check "bench --json: floor_ms at peak:copy,write $rates" "$PY" - "$T/roof" "$rates" <<'EOF'
import json, sys
r = json.loads(open(sys.argv[1]).read())
peak, rest = sys.argv[2].split(":")
copy, write = map(float, rest.split(","))
assert r["bytes"] == 43136, r
want = max(2 * 2 * 32 * 16 * 64 * 9 / 1e9 / float(peak) * 1e3, 43136 / copy / 1e6,
           18560 / write / 1e6)
assert abs(r["floor_ms"] - want) <= 1e-3 * want, (r["floor_ms"], want)
assert (r["copy_gbps"], r["write_gbps"]) == (copy, write), r
EOF
done
sed -i 's/"mr":[[:space:]]*3/"mr": 4/' "$T/pack/tuning.json"
"$CG" bench "$T/tiny.json" --pack "$T/pack" --reps 1 --min-ms 0 >"$T/out" 2>"$T/err"
rc=$?
if [ $rc -eq 2 ] && grep -q "tuning.json: checksum mismatch" "$T/err"; then
    pass "a modified tuning.json is refused like any pack file"
else fail "modified tuning.json" "exit $rc: $(cat "$T/err")"; fi

check "gen --no-tuning" "$CG" gen "$T/tiny.json" -o "$T/pack_h" --isa "$ISA" --db "$DB" --no-tuning
got=$(plan_of "$T/pack_h")
if [[ "$got" == false* ]] && [ "$got" != "false 3 2" ] && [ ! -e "$T/pack_h/tuning.json" ]; then
    pass "--no-tuning: heuristic plan, no tuning.json ($got)"
else fail "--no-tuning" "got '$got'"; fi
echo '{"mr": 2}' >"$T/mr2.json"
check "gen --plan with a database" "$CG" gen "$T/tiny.json" -o "$T/pack_p" --isa "$ISA" --db "$DB" \
    --plan "$T/mr2.json"
got=$(plan_of "$T/pack_p")
if [[ "$got" == "false 2 "* ]]; then pass "--plan FILE beats the database ($got)"
else fail "--plan precedence" "got '$got'"; fi
CONVGRAD_TUNING_DB=$DB "$CG" gen "$T/tiny.json" -o "$T/pack_env" --isa "$ISA" >/dev/null 2>&1
got=$(plan_of "$T/pack_env")
if [ "$got" = "true 3 2" ]; then pass "\$CONVGRAD_TUNING_DB is consulted ($got)"
else fail "\$CONVGRAD_TUNING_DB" "got '$got'"; fi
check "convgrad plan --db: target.tuned and the overrides" "$PY" -c '
import json, subprocess, sys
p = json.loads(subprocess.run(sys.argv[1:], check=True, capture_output=True, text=True).stdout)
assert p["target"]["tuned"] and p["target"]["overrides"] == {"mr": 3, "splits": 2}, p["target"]
' "$CG" plan "$T/tiny.json" --db "$DB"

# ---------------------------------------------------------------------------------------------
echo "== run and bench: the cache path consults the database too"
"$CG" bench "$T/tiny.json" --db "$DB" --reps 2 --min-ms 0 --json >"$T/bench_t" 2>"$T/err"
"$CG" bench "$T/tiny.json" --db "$DB" --no-tuning --reps 2 --min-ms 0 --json >"$T/bench_h" 2>>"$T/err"
if grep -q '"tuned": true' "$T/bench_t" && grep -q '"tuned": false' "$T/bench_h"; then
    pass "bench --json: tuned true from the database, false with --no-tuning"
else fail "bench tuned flag" "$(cat "$T/bench_t" "$T/bench_h" "$T/err")"; fi
"$PY" -c '
import numpy as np, sys
r = np.random.default_rng(3)
np.save(sys.argv[1] + "/x.npy", r.standard_normal((2, 8, 8, 16)).astype("<f4"))
np.save(sys.argv[1] + "/dy.npy", r.standard_normal((2, 8, 8, 32)).astype("<f4"))' "$T" &&
    mkdir -p "$T/in" && mv "$T/x.npy" "$T/dy.npy" "$T/in/"
check "run --target ref" "$CG" run "$T/tiny.json" --target ref --inputs "$T/in" --outputs "$T/ref"
check "run --target cpu with the tuned plan" "$CG" run "$T/tiny.json" --target cpu --db "$DB" \
    --inputs "$T/in" --outputs "$T/cpu"
check "run: the tuned plan's dw and db match the reference" "$PY" -c '
import numpy as np, sys
for t in ("dw", "db"):
    a, b = np.load(sys.argv[1] + "/" + t + ".npy"), np.load(sys.argv[2] + "/" + t + ".npy")
    assert np.allclose(a, b, rtol=1e-4, atol=1e-4 * np.abs(b).max()), t
' "$T/cpu" "$T/ref"

# Entries that differ only in their Winograd tile are two cache entries (a retune from F(2x2)
# to F(4x4) must not run the cached F(2x2) kernels).
echo '{"name": "wino", "op": "bwd_data", "layout": "NHWC", "n": 1, "c": 16, "k": 16,
 "input": [6, 6], "filter": [3, 3], "pad": [1, 1]}' >"$T/wino.json"
for m in 2 4; do
    "$CG" plan "$T/wino.json" --no-tuning | "$PY" -c '
import json, sys
db = json.load(open(sys.argv[1]))
key, entry = next(iter(db["entries"].items()))
canonical = json.loads(sys.stdin.read())["problem"]["canonical"]
entry = dict(entry, overrides={"winograd": int(sys.argv[3])})
json.dump({"schema": 1, "entries": {canonical + key[key.index("|"):]: entry}}, open(sys.argv[2], "w"))
' "$DB" "$T/wino$m.db" "$m"
done
entries=$(ls "$CONVGRAD_CACHE" | wc -l)
"$CG" bench "$T/wino.json" --db "$T/wino2.db" --reps 2 --min-ms 0 >/dev/null 2>"$T/err" &&
    "$CG" bench "$T/wino.json" --db "$T/wino4.db" --reps 2 --min-ms 0 >/dev/null 2>>"$T/err"
check "bench: entries differing only in the Winograd tile are two cache entries" \
    test "$(ls "$CONVGRAD_CACHE" | wc -l)" -eq $((entries + 2))
check "plan: the two entries plan F(2x2) and F(4x4)" "$PY" -c '
import json, subprocess, sys
ms = [json.loads(subprocess.run([sys.argv[1], "plan", sys.argv[2], "--db", d], capture_output=True,
      text=True, check=True).stdout)["steps"][-1].get("wino_m") for d in sys.argv[3:]]
assert ms == [2, 4], ms
' "$CG" "$T/wino.json" "$T/wino2.db" "$T/wino4.db"

# ---------------------------------------------------------------------------------------------
echo "== the default location, damaged databases"
"$CG" tune "$T/tiny.json" --target cpu --budget-s 2 --reps 2 --min-ms 1 >/dev/null 2>"$T/err"
check "tune without --db writes \$XDG_CACHE_HOME/convgrad/tuning.json" \
    grep -q '_g1mb2ic16oc32_' "$XDG_CACHE_HOME/convgrad/tuning.json"
echo '{"schema": 1, "entries": {' >"$XDG_CACHE_HOME/convgrad/tuning.json"
"$CG" gen "$T/tiny.json" -o "$T/pack_w" --isa "$ISA" >"$T/out" 2>"$T/err"
rc=$?
if [ $rc -eq 0 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "warning: ignoring the tuning database" "$T/err"
then pass "damaged default database: gen warns in one line and plans by the heuristics"
else fail "damaged default database (gen)" "exit $rc: $(cat "$T/err")"; fi
"$CG" tune "$T/tiny.json" --target cpu --budget-s 2 --reps 2 --min-ms 1 >/dev/null 2>"$T/err"
rc=$?
if [ $rc -eq 0 ] && [ -s "$XDG_CACHE_HOME/convgrad/tuning.json.corrupt" ] &&
    "$PY" -c 'import json, sys; json.load(open(sys.argv[1]))' "$XDG_CACHE_HOME/convgrad/tuning.json"
then pass "damaged default database: tune moves it to tuning.json.corrupt and writes a fresh one"
else fail "damaged default database (tune)" "exit $rc: $(tail -n 3 "$T/err")"; fi

# expect_bad DESCRIPTION NAMED COMMAND...: exit 2, one stderr line naming NAMED, nothing on
# stdout, and neither the database directory nor the cache changed.
expect_bad() {
    local desc=$1 named=$2 before_db before_cache rc why=""
    shift 2
    before_db=$(listing "$T/bad"; md5sum "$T/bad"/* 2>/dev/null)
    before_cache=$(listing "$CONVGRAD_CACHE")
    "$@" >"$T/out" 2>"$T/err"
    rc=$?
    [ $rc -eq 2 ] || why="exit $rc, want 2"
    [ -z "$why" ] && [ "$(wc -l <"$T/err")" -ne 1 ] && why="$(wc -l <"$T/err") lines on stderr"
    [ -z "$why" ] && ! grep -q "^convgrad: .*$named" "$T/err" && why="line does not name '$named'"
    [ -z "$why" ] && [ -s "$T/out" ] && why="wrote to stdout"
    [ -z "$why" ] && [ "$before_db" != "$(listing "$T/bad"; md5sum "$T/bad"/* 2>/dev/null)" ] &&
        why="database directory changed"
    [ -z "$why" ] && [ "$before_cache" != "$(listing "$CONVGRAD_CACHE")" ] && why="cache changed"
    if [ -n "$why" ]; then fail "$desc" "$why; stderr: $(head -c 300 "$T/err")"
    else pass "$desc: $(cat "$T/err")"; fi
}
mkdir -p "$T/bad"
printf '{"schema": 1, "entries": {"x": ' >"$T/bad/trunc.json"
expect_bad "tune --db with truncated JSON" "trunc.json" "$CG" tune "$T/tiny.json" "${FAST[@]}" \
    --db "$T/bad/trunc.json"
"$PY" - "$DB" "$T/bad/range.json" <<'EOF'
import json, sys
db = json.load(open(sys.argv[1]))
for e in db["entries"].values():
    e["overrides"] = {"mr": 99}
json.dump(db, open(sys.argv[2], "w"))
EOF
expect_bad "tune --db with an override out of range" "range.json" "$CG" tune "$T/tiny.json" \
    "${FAST[@]}" --db "$T/bad/range.json"
echo '{"schema": 1, "entries": {}, "colour": 1}' >"$T/bad/key.json"
expect_bad "gen --db with an unknown key" "key.json" "$CG" gen "$T/tiny.json" -o "$T/bad/pack" \
    --db "$T/bad/key.json"
expect_bad "run with a damaged \$CONVGRAD_TUNING_DB" "trunc.json" env \
    CONVGRAD_TUNING_DB="$T/bad/trunc.json" "$CG" run "$T/tiny.json" --target cpu --inputs "$T/in" \
    --outputs "$T/bad/out"

# ---------------------------------------------------------------------------------------------
echo "== --help and bad arguments"
"$CG" tune --help >"$T/out" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q "usage: convgrad tune" "$T/out"; then pass "convgrad tune --help"
else fail "convgrad tune --help" "exit $rc"; fi
for args in "--budget-s 0" "--target vulkan" "--frobnicate" "--reps x" "--isa sse9" ""; do
    # shellcheck disable=SC2086
    expect_bad "tune $T/tiny.json $args" "tune" "$CG" tune $([ -n "$args" ] && echo "$T/tiny.json") $args
done
expect_bad "tune of a missing config" "nope.json" "$CG" tune "$T/nope.json" --target cpu

echo "test_tune: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
