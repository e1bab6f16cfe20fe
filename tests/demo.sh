#!/usr/bin/env bash
# demo.sh: the main job (`make demo`). For every config in configs/examples/: generate and build
# a pack for this machine's ISA into out/demo/<name>, make random inputs with numpy, run the
# pack (--target cpu) and the plain-loop reference (--target ref) on them, compare with the
# reference tolerance rule, print a table; then time the packs with `convgrad bench`.
# Exit status 1 if any comparison (or step) fails.
set -u
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
CG=$ROOT/build/convgrad
PY=/usr/bin/python3
OUT=$ROOT/out/demo
failed=0
start_all=$(date +%s%N)

if [ ! -x "$CG" ]; then
    echo "demo: $CG is missing; run make all" >&2
    exit 1
fi
mkdir -p "$OUT"
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

# Python helpers (geometry, .npy dtypes, tolerance) shared with tests/test_torch.py.
py() { "$PY" -c "import sys; sys.path.insert(0, '$ROOT/tests'); from test_torch import *; $1" \
    "${@:2}"; }

# The ISA `convgrad plan` chooses here: the packs are built for it alone.
isa=$("$CG" plan configs/examples/ex_3d_bwd_data.json | "$PY" -c \
    'import json, sys; t = sys.stdin.read(); print(json.JSONDecoder().raw_decode(t[t.find("{"):])[0]["target"]["isa"])')
[ -n "$isa" ] || isa=generic
echo "convgrad demo: examples in configs/examples, packs in out/demo (isa $isa)"
echo

rows=$OUT/rows.txt
: >"$rows"
configs=(configs/examples/*.json)
for config in "${configs[@]}"; do
    name=$(basename "$config" .json)
    pack=$OUT/$name
    data=$OUT/data/$name
    rm -rf "$data"
    t0=$(date +%s%N)
    if ! "$CG" gen "$config" -o "$pack" --isa "$isa" --build >"$OUT/$name.log" 2>&1; then
        echo "[FAIL] $name: gen/build failed:"
        sed 's/^/    /' "$OUT/$name.log"
        failed=1
        continue
    fi
    gen_ms=$(ms_since "$t0")
    canonical=$("$CG" plan "$config" --isa "$isa" | "$PY" -c \
        'import json, sys; t = sys.stdin.read(); print(json.JSONDecoder().raw_decode(t[t.find("{"):])[0]["problem"]["canonical"])')
    py 'random_inputs(Geometry(load_problems(sys.argv[1])[0]), sys.argv[2], np.random.default_rng(1))' \
        "$config" "$data/in"
    t0=$(date +%s%N)
    "$CG" run "$config" --target cpu --pack "$pack" --inputs "$data/in" --outputs "$data/cpu" \
        2>"$OUT/$name.log"
    rc_cpu=$?
    cpu_ms=$(ms_since "$t0")
    t0=$(date +%s%N)
    "$CG" run "$config" --target ref --inputs "$data/in" --outputs "$data/ref" 2>>"$OUT/$name.log"
    rc_ref=$?
    ref_ms=$(ms_since "$t0")
    if [ $rc_cpu -ne 0 ] || [ $rc_ref -ne 0 ]; then
        echo "[FAIL] $name: convgrad run failed (cpu exit $rc_cpu, ref exit $rc_ref):"
        sed 's/^/    /' "$OUT/$name.log"
        failed=1
        continue
    fi
    # One row per output: canonical, output, relative max error, tolerance, verdict, times.
    py '
config, cpu, ref, canonical, times = sys.argv[1:6]
geo = Geometry(load_problems(config)[0])
status = 0
for op, t in zip(geo.ops, geo.outputs()):
    try:
        ok, err, scale = compare(load_output(geo, cpu, t), load_output(geo, ref, t),
                                 geo.tolerance(t))
        rel = "%.2e" % (err / max(scale, SCALE_FLOOR))
    except (OSError, ValueError) as e:
        ok, rel = False, "(%s)" % e
    status |= not ok
    print("%s|%s (%s)|%s|%.2e|%s|%s" % (canonical, op, t, rel, geo.tolerance(t),
                                        "pass" if ok else "FAIL", times))
sys.exit(status)
' "$config" "$data/cpu" "$data/ref" "$canonical" "$gen_ms|$cpu_ms|$ref_ms" >>"$rows" || failed=1
done

# The table: widths from the longest entries.
"$PY" - "$rows" <<'EOF'
import sys
head = ["problem (canonical)", "op (output)", "max err", "tolerance", "result", "gen+build ms",
        "cpu run ms", "ref run ms"]
rows = [line.rstrip("\n").split("|") for line in open(sys.argv[1]) if line.strip()]
widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(head)]
def show(cells):
    print("  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in
                    enumerate(zip(cells, widths))))
show(head)
show(["-" * w for w in widths])
for r in rows:
    show(r)
print("\nmax err: largest |cpu - ref| relative to max |ref| (floor 1e-3); tolerance: "
      "2*u_store + 64*2^-24*sqrt(L), L the reduction length.\nTimes are wall-clock times of "
      "whole commands (process start, .npy I/O, loading the pack included).")
EOF

echo
echo "convgrad bench (cpu, --reps 3 --min-ms 50):"
header_shown=0
for config in "${configs[@]}"; do
    name=$(basename "$config" .json)
    [ -d "$OUT/$name" ] || continue
    if ! "$CG" bench "$config" --target cpu --pack "$OUT/$name" --reps 3 --min-ms 50 \
        >"$OUT/bench.txt" 2>&1; then
        echo "[FAIL] bench $name:"
        sed 's/^/    /' "$OUT/bench.txt"
        failed=1
        continue
    fi
    if [ $header_shown -eq 0 ]; then head -n 1 "$OUT/bench.txt"; header_shown=1; fi
    tail -n +2 "$OUT/bench.txt"
done

echo
n_rows=$(wc -l <"$rows")
n_fail=$(grep -c '|FAIL|' "$rows")
if [ $failed -ne 0 ]; then
    echo "demo: FAILED ($n_fail of $n_rows outputs differ from the reference, or a step failed;" \
        "$(ms_since "$start_all") ms)"
    exit 1
fi
echo "demo: all $n_rows outputs of ${#configs[@]} examples match the reference" \
    "($(ms_since "$start_all") ms)"
