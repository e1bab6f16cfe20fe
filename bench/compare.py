#!/usr/bin/python3
"""compare.py: convgrad vs oneDNN on the benchmark shapes, measured in the same run.

    /usr/bin/python3 bench/compare.py [--threads N] [--rounds R] [--shapes FILE]
                                      [--config configs/bench/all.json] [--only ID,...]
                                      [--out out/bench] [--tuned [--db FILE]] [--storage]

For every shape, R interleaved rounds: oneDNN (bench/build/dnnl_bench, the fastest of all its
implementations, Winograd included) then convgrad (`convgrad bench` on a pack built for this
machine). Each tool reports a median over its own repetitions; the table shows the median of
those per-round medians, GFLOP/s with FLOPs = 2*N*K*(C/G)*prod(out)*prod(filter) per
convolution op, % of the machine's FMA peak as measured by `convgrad bench` in the same run,
the roofline's floor (the FLOPs at that peak, or the bytes that must move at the memory
bandwidth `convgrad bench` measures: every tensor read and written once, at the copy rate,
and the written ones at the write rate, whichever is longest) and the % of it reached, and
the speed ratio convgrad/oneDNN (> 1: convgrad is faster), and the range and median of the
ratios of the single rounds (each round times the two back to back, so that a spell of the
machine slows both: a wide range says the medians fell in different spells, and the median of
the paired ratios is the estimate such spells move least). Writes results.md and
results.json under --out. This machine is noisy: only the medians and ratios are meaningful.

The shapes are the problems of --config (by default the nine benchmark shapes; the explicit
problems of a sweep file such as configs/sweeps/layers_nchw.json work too), --only keeping
some of them by name; oneDNN gets their canonical strings from `convgrad sweep --list`, or
from --shapes FILE (`ID canonical-string` lines, as bench/shapes.txt, which records the MIOpen
driver line of each benchmark shape). The problems timed are written to OUT/config.json.

convgrad's pack is planned by the heuristics alone (`gen --no-tuning`). With --tuned a second
pack is planned with the tuning database (`convgrad tune`; --db FILE, else the user's) and
both are timed in every round: the table shows heuristic and tuned ms side by side, whether
the database had an entry for the shape, and the ratio of oneDNN to the tuned time.

With --storage the shapes are timed instead with f32, f16 and bf16 tensors (the same
problems, packs planned by the heuristics), interleaved, each 16-bit time as a % of the f32
one; where the host's best ISA for bf16 is another than for f32 (avx512bf16, whose bf16 stores
round in one instruction), bf16 is timed on both. oneDNN is not run.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def chosen_problems(args):
    """The problems of --config that --only names (all of them without it)."""
    with open(args.config) as f:
        problems = json.load(f).get("problems", [])
    if args.only:
        keep = args.only.split(",")
        missing = sorted(set(keep) - {p.get("name") for p in problems})
        if missing:
            sys.exit(f"compare.py: --only: {args.config} has no problem named "
                     f"{', '.join(missing)}")
        problems = [p for p in problems if p.get("name") in keep]
    if not problems:
        sys.exit(f"compare.py: {args.config}: no problems to time")
    return problems


def shape_strings(config, shapes_file, convgrad):
    """{ID: canonical problem string}: --shapes FILE's lines, else `convgrad sweep --list`'s."""
    if shapes_file:
        with open(shapes_file) as f:
            lines = f.read().splitlines()
    else:
        listed = subprocess.run([convgrad, "sweep", config, "--list"], capture_output=True,
                                text=True)
        if listed.returncode != 0:
            sys.exit(f"compare.py: {listed.stderr.strip()}")
        lines = listed.stdout.splitlines()
    return {parts[0]: parts[1] for parts in map(str.split, lines)
            if len(parts) >= 2 and not parts[0].startswith("#")}


def run_json(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--min-ms", type=int, default=300)
    ap.add_argument("--shapes", default=None,
                    help="ID canonical-string lines (default: the problems of --config)")
    ap.add_argument("--config", default=os.path.join(ROOT, "configs", "bench", "all.json"))
    ap.add_argument("--pack", default=os.path.join(ROOT, "out", "packs", "bench"))
    ap.add_argument("--out", default=os.path.join(ROOT, "out", "bench"))
    ap.add_argument("--only", default="", help="comma-separated shape ids")
    ap.add_argument("--tag", default="heuristic", help="label of this convgrad build")
    ap.add_argument("--tuned", action="store_true",
                    help="also time a pack planned with the tuning database")
    ap.add_argument("--db", default=None, help="the tuning database (default: the user's)")
    ap.add_argument("--storage", action="store_true",
                    help="time f32, f16 and bf16 tensors of each shape against each other")
    args = ap.parse_args()
    if args.tuned:
        args.tag = "heuristic and tuned"

    convgrad = os.path.join(ROOT, "build", "convgrad")
    dnnl = os.path.join(ROOT, "bench", "build", "dnnl_bench")
    # the problems timed, in a config of their own that the packs and `convgrad bench` read
    problems = chosen_problems(args)
    os.makedirs(args.out, exist_ok=True)
    args.config = os.path.join(args.out, "config.json")
    with open(args.config, "w") as f:
        json.dump({"problems": problems}, f, indent=1)
    strings = shape_strings(args.config, args.shapes, convgrad)
    unnamed = [p.get("name", "?") for p in problems if p.get("name") not in strings]
    if unnamed:
        sys.exit(f"compare.py: {args.shapes or 'convgrad sweep --list'}: no problem string "
                 f"for {', '.join(unnamed)}")
    shapes = [(p["name"], strings[p["name"]]) for p in problems]

    if args.storage:
        compare_storage(args, convgrad, shapes)
        return
    gen = [convgrad, "gen", args.config, "--isa", host_isa(convgrad), "--threads",
           str(args.threads), "--build"]
    subprocess.run(gen + ["-o", args.pack, "--no-tuning"], check=True, stdout=subprocess.DEVNULL)
    tuned_pack = args.pack + "-tuned"
    if args.tuned:
        subprocess.run(gen + ["-o", tuned_pack] + (["--db", args.db] if args.db else []),
                       check=True, stdout=subprocess.DEVNULL)
    results = {sid: {"dnnl": [], "convgrad": [], "tuned": [], "has_entry": False, "peak": [],
                     "floor": [], "copy": [], "write": [],
                     "gflop": None, "impl": set()} for sid, _ in shapes}
    for rnd in range(args.rounds):
        for sid, problem in shapes:
            r = results[sid]
            records = run_json([dnnl, problem, "--threads", str(args.threads), "--rounds", "1",
                                "--min-ms", str(args.min_ms), "--json"])
            # A problem with several ops (S7: dx and dw) runs them one after the other.
            ms = sum(rec["median_ms"] for rec in records if rec.get("impl"))
            r["dnnl"].append(ms)
            r["impl"].update(rec["impl"] for rec in records if rec.get("impl"))
            rec = run_json([convgrad, "bench", args.config, "--name", sid, "--pack", args.pack,
                            "--threads", str(args.threads), "--min-ms", str(args.min_ms),
                            "--json"])[0]
            r["convgrad"].append(rec["median_ms"])
            r["peak"].append(rec["peak_gflops"])
            r["floor"].append(rec["floor_ms"])
            r["copy"].append(rec["copy_gbps"])
            r["write"].append(rec["write_gbps"])
            r["gflop"] = rec["gflop"]
            line = (f"round {rnd + 1}/{args.rounds} {sid}: oneDNN {ms:.3f} ms, "
                    f"convgrad {rec['median_ms']:.3f} ms")
            if args.tuned:
                tuned = run_json([convgrad, "bench", args.config, "--name", sid, "--pack",
                                  tuned_pack, "--threads", str(args.threads), "--min-ms",
                                  str(args.min_ms), "--json"])[0]
                r["tuned"].append(tuned["median_ms"])
                r["has_entry"] = tuned["tuned"]
                line += f", tuned {tuned['median_ms']:.3f} ms{'' if tuned['tuned'] else ' (no entry)'}"
            print(line, file=sys.stderr, flush=True)

    rows = []
    for sid, problem in shapes:
        r = results[sid]
        d_ms, c_ms = statistics.median(r["dnnl"]), statistics.median(r["convgrad"])
        peak = statistics.median(r["peak"])
        c_gf, d_gf = r["gflop"] / (c_ms / 1e3), r["gflop"] / (d_ms / 1e3)
        row = {"id": sid, "problem": problem, "gflop": r["gflop"], "convgrad_ms": c_ms,
               "convgrad_gflops": c_gf, "pct_peak": 100 * c_gf / peak,
               "onednn_ms": d_ms, "onednn_gflops": d_gf, "onednn_impl": sorted(r["impl"]),
               "ratio": d_ms / c_ms, "peak_gflops": peak,
               "floor_ms": statistics.median(r["floor"]),
               "copy_gbps": statistics.median(r["copy"]), "write_gbps": statistics.median(r["write"])}
        row["pct_roofline"] = 100 * row["floor_ms"] / c_ms
        row["round_ratios"] = [d / c for d, c in zip(r["dnnl"], r["convgrad"])]
        row["median_round_ratio"] = statistics.median(row["round_ratios"])
        if args.tuned:
            t_ms = statistics.median(r["tuned"])
            t_gf = r["gflop"] / (t_ms / 1e3)
            row.update({"tuned_ms": t_ms, "tuned_gflops": t_gf, "tuned_pct_peak": 100 * t_gf / peak,
                        "has_entry": r["has_entry"], "tuned_ratio": d_ms / t_ms,
                        "tuned_round_ratios": [d / t for d, t in zip(r["dnnl"], r["tuned"])]})
        rows.append(row)
    geomean = geometric_mean([row["ratio"] for row in rows])
    paired_geomean = geometric_mean([row["median_round_ratio"] for row in rows])
    if args.tuned:
        tuned_geomean = geometric_mean([row["tuned_ratio"] for row in rows])
        write_tuned(args, rows, geomean, tuned_geomean)
        return
    lines = [f"convgrad ({args.tag}) vs oneDNN, f32, {args.threads} thread(s), medians of "
             f"{args.rounds} interleaved rounds; peak {rows[0]['peak_gflops']:.0f} GFLOP/s, "
             f"memory {rows[0]['copy_gbps']:.0f} GB/s copying, {rows[0]['write_gbps']:.0f} GB/s "
             "writing, measured",
             "",
             "| id | convgrad ms | convgrad GFLOP/s | % peak | floor ms | % roofline | oneDNN ms | "
             "oneDNN GFLOP/s | oneDNN impl | ratio | ratio by round | median round ratio |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |"]
    for row in rows:
        lines.append(f"| {row['id']} | {row['convgrad_ms']:.2f} | {row['convgrad_gflops']:.0f} | "
                     f"{row['pct_peak']:.0f}% | {row['floor_ms']:.2f} | "
                     f"{row['pct_roofline']:.0f}% | {row['onednn_ms']:.2f} | "
                     f"{row['onednn_gflops']:.0f} | {', '.join(row['onednn_impl'])} | "
                     f"{row['ratio']:.2f}x | {ratio_range(row['round_ratios'])} | "
                     f"{row['median_round_ratio']:.2f}x |")
    lines += ["", f"geometric mean of the ratios: {geomean:.2f}x (of the median round ratios: "
              f"{paired_geomean:.2f}x)"]
    write_results(args, args.tag, lines, {"rows": rows, "geomean_ratio": geomean,
                                          "geomean_median_round_ratio": paired_geomean})


def write_results(args, tag, lines, payload):
    """The table as results_<T>t_<tag>.md (and printed), the data as .json, under --out."""
    os.makedirs(args.out, exist_ok=True)
    stem = os.path.join(args.out, f"results_{args.threads}t_{tag}")
    with open(stem + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(stem + ".json", "w") as f:
        json.dump(dict({"threads": args.threads, "rounds": args.rounds}, **payload), f, indent=2)
    print("\n".join(lines))


def geometric_mean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def ratio_range(ratios):
    """The lowest and highest of a shape's per-round ratios, as "0.91-1.12x"."""
    return f"{min(ratios):.2f}-{max(ratios):.2f}x"


def write_tuned(args, rows, geomean, tuned_geomean):
    """The --tuned table: heuristic and tuned convgrad next to oneDNN."""
    lines = [f"convgrad heuristic and tuned vs oneDNN, f32, {args.threads} thread(s), medians of "
             f"{args.rounds} interleaved rounds; peak {rows[0]['peak_gflops']:.0f} GFLOP/s measured",
             "",
             "| id | heuristic ms | tuned ms | entry | tuned GFLOP/s | % peak | oneDNN ms | "
             "oneDNN impl | ratio heuristic | ratio tuned | tuned ratio by round |",
             "| --- | ---: | ---: | --- | ---: | ---: | ---: | --- | ---: | ---: | ---: |"]
    for row in rows:
        lines.append(f"| {row['id']} | {row['convgrad_ms']:.2f} | {row['tuned_ms']:.2f} | "
                     f"{'yes' if row['has_entry'] else 'no'} | {row['tuned_gflops']:.0f} | "
                     f"{row['tuned_pct_peak']:.0f}% | {row['onednn_ms']:.2f} | "
                     f"{', '.join(row['onednn_impl'])} | {row['ratio']:.2f}x | "
                     f"{row['tuned_ratio']:.2f}x | {ratio_range(row['tuned_round_ratios'])} |")
    lines += ["", f"geometric mean of the ratios (oneDNN ms / convgrad ms): heuristic "
              f"{geomean:.2f}x, tuned {tuned_geomean:.2f}x"]
    write_results(args, "tuned", lines, {"rows": rows, "geomean_ratio": geomean,
                                         "geomean_ratio_tuned": tuned_geomean})


def host_isa(convgrad, config=None):
    """The ISA gen plans the (first) problem of config for on this host (default: S3, f32)."""
    config = config or os.path.join(ROOT, "configs", "bench", "S3.json")
    plan = subprocess.run([convgrad, "plan", config], check=True, capture_output=True,
                          text=True).stdout
    return json.JSONDecoder().raw_decode(plan)[0]["target"]["isa"]  # the first plan


def compare_storage(args, convgrad, shapes):
    """--storage: each shape with f32, f16 and bf16 tensors, interleaved, 16-bit as % of f32."""
    os.makedirs(args.out, exist_ok=True)
    with open(args.config) as f:
        base = json.load(f)
    f32_isa = host_isa(convgrad)
    runs = [("f32", f32_isa)]  # (dtype, ISA) timed in every round
    configs = {"f32": args.config}
    for dtype in ("f16", "bf16"):
        configs[dtype] = os.path.join(args.out, f"config_{dtype}.json")
        with open(configs[dtype], "w") as f:
            json.dump({"problems": [dict(p, dtype=dtype) for p in base["problems"]]}, f, indent=1)
        isa = host_isa(convgrad, configs[dtype])
        runs.append((dtype, isa))
        if isa != f32_isa:
            runs.append((dtype, f32_isa))
    for dtype, config in configs.items():
        isas = sorted({isa for d, isa in runs if d == dtype})
        subprocess.run([convgrad, "gen", config, "--isa", ",".join(isas), "--threads",
                        str(args.threads), "--build", "--no-tuning", "-o",
                        f"{args.pack}-{dtype}"], check=True, stdout=subprocess.DEVNULL)
    times = {(sid, run): [] for sid, _ in shapes for run in runs}
    for rnd in range(args.rounds):
        for sid, _ in shapes:
            for dtype, isa in runs:
                rec = run_json([convgrad, "bench", configs[dtype], "--name", sid, "--pack",
                                f"{args.pack}-{dtype}", "--isa", isa, "--threads",
                                str(args.threads), "--min-ms", str(args.min_ms), "--json"])[0]
                times[(sid, (dtype, isa))].append(rec["median_ms"])
            print(f"round {rnd + 1}/{args.rounds} {sid}: " + ", ".join(
                f"{d} {i} {times[(sid, (d, i))][-1]:.3f} ms" for d, i in runs),
                file=sys.stderr, flush=True)
    header = " | ".join(f"{d} {i} ms" + ("" if d == "f32" else f" | {d} {i} % of f32")
                        for d, i in runs)
    lines = [f"16-bit storage against f32, {args.threads} thread(s), medians of {args.rounds} "
             "interleaved rounds (% of f32: f32 ms / 16-bit ms)", "",
             f"| id | {header} |", "| --- |" + " ---: |" * (2 * len(runs) - 1)]
    rows, speeds = [], {run: [] for run in runs[1:]}
    for sid, problem in shapes:
        med = {run: statistics.median(times[(sid, run)]) for run in runs}
        cells = []
        for run in runs:
            cells.append(f"{med[run]:.2f}")
            if run != runs[0]:
                cells.append(f"{100 * med[runs[0]] / med[run]:.0f}%")
                speeds[run].append(med[runs[0]] / med[run])
        lines.append(f"| {sid} | " + " | ".join(cells) + " |")
        rows.append({"id": sid, "problem": problem,
                     "median_ms": {f"{d} {i}": med[(d, i)] for d, i in runs},
                     "rounds_ms": {f"{d} {i}": times[(sid, (d, i))] for d, i in runs}})
    geomeans = {f"{d} {i}": 100 * geometric_mean(v) for (d, i), v in speeds.items()}
    lines += ["", "geometric mean, % of f32: " +
              ", ".join(f"{k} {v:.0f}%" for k, v in geomeans.items())]
    write_results(args, "storage", lines, {"rows": rows, "geomean_pct_of_f32": geomeans})


if __name__ == "__main__":
    main()
