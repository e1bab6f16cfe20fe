#!/usr/bin/python3
"""test_torch.py: PyTorch as the outside oracle for `convgrad run`.

Draws ~60 random small problems (fixed seed) across ops, ranks 1-3, groups (depthwise and
Kg != Cg), strides, dilations, asymmetric padding, both layout families and all three dtypes,
adds the pinned problems of paths that few channels never reach (Winograd fwd, dx and dw);
writes them into one config, generates and builds one pack, runs every problem with
--target cpu (that pack) and --target ref, and checks both against torch.autograd in float64
on the very values stored in the .npy files, with cg_reference_tolerance()'s rule.

The helpers above main() (problem geometry, .npy dtypes, the tolerance rule) are also used by
tests/test_cli.sh and tests/demo.sh; torch is imported only by the oracle itself.

Run from anywhere with /usr/bin/python3 (numpy and torch from Debian). Exit 1 on failure.
"""
import json
import math
import os
import random
import shutil
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONVGRAD = os.path.join(ROOT, "build", "convgrad")

LAYOUTS = {1: ("NCW", "NWC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}
RANK_OF_LAYOUT = {name: rank for rank, pair in LAYOUTS.items() for name in pair}
U_STORE = {"f32": 2.0**-24, "f16": 2.0**-11, "bf16": 2.0**-8}
DESCR = {"f32": "<f4", "f16": "<f2", "bf16": "<u2"}
OUTPUT_OF_OP = {"bwd_data": "dx", "bwd_weight": "dw", "bwd_bias": "db", "fwd": "y"}
SCALE_FLOOR = 1e-3  # CG_COMPARE_SCALE_FLOOR
TOL_ACC_FACTOR = 64.0  # CG_TOL_ACC_FACTOR


# ---------------------------------------------------------------------------------------------
# Problem geometry (spec/problem-format.md)

class Geometry:
    """A problem object with its defaults filled in and the output size derived."""

    def __init__(self, p):
        self.ops = [p["op"]] if isinstance(p["op"], str) else list(p["op"])
        self.rank = len(p["input"])
        self.layout = p.get("layout", LAYOUTS[self.rank][0])
        assert RANK_OF_LAYOUT[self.layout] == self.rank, "layout rank != input rank"
        self.channels_last = self.layout.endswith("C")
        self.dtype = p.get("dtype", "f32")
        self.n, self.c, self.k = p["n"], p["c"], p["k"]
        self.g = p.get("groups", 1)
        ones, zeros = [1] * self.rank, [0] * self.rank
        self.inp, self.filt = list(p["input"]), list(p["filter"])
        self.stride = list(p.get("stride", ones))
        self.dil = list(p.get("dilation", ones))
        pad = list(p.get("pad", zeros))
        self.pad_lo = list(p.get("pad_lo", pad))
        self.pad_hi = list(p.get("pad_hi", pad))
        self.out = [(i + lo + hi - d * (f - 1) - 1) // s + 1 for i, lo, hi, d, f, s in
                    zip(self.inp, self.pad_lo, self.pad_hi, self.dil, self.filt, self.stride)]
        self.name = p.get("name", "")

    def shape(self, tensor):
        """Shape of x/dx, w/dw, dy/y or db in the problem's layout family."""
        if tensor == "db":
            return (self.k,)
        first, second, spatial = {
            "x": (self.n, self.c, self.inp), "dx": (self.n, self.c, self.inp),
            "w": (self.k, self.c // self.g, self.filt), "dw": (self.k, self.c // self.g, self.filt),
            "dy": (self.n, self.k, self.out), "y": (self.n, self.k, self.out)}[tensor]
        if self.channels_last:
            return (first, *spatial, second)
        return (first, second, *spatial)

    def inputs(self):
        """The input files the ops read, as cg_problem_reads() says."""
        ops = set(self.ops)
        names = []
        if ops & {"fwd", "bwd_weight"}:
            names.append("x")
        if ops & {"fwd", "bwd_data"}:
            names.append("w")
        if ops & {"bwd_data", "bwd_weight", "bwd_bias"}:
            names.append("dy")
        return names

    def outputs(self):
        return [OUTPUT_OF_OP[op] for op in self.ops]

    def reduction_length(self, tensor):
        """cg_reference_reduction_length()."""
        if tensor == "dx":
            return (self.k // self.g) * math.prod(self.filt)
        if tensor in ("dw", "db"):
            return self.n * math.prod(self.out)
        if tensor == "y":
            return (self.c // self.g) * math.prod(self.filt)
        return 1

    def tolerance(self, tensor):
        """cg_reference_tolerance(): 2*u_store + 64 * 2^-24 * sqrt(L)."""
        return 2.0 * U_STORE[self.dtype] + TOL_ACC_FACTOR * 2.0**-24 * math.sqrt(
            self.reduction_length(tensor))


def load_problems(path):
    with open(path) as f:
        doc = json.load(f)
    return doc["problems"] if "problems" in doc else [doc]


# ---------------------------------------------------------------------------------------------
# Storage types: f32 '<f4', f16 '<f2', bf16 as '<u2' bit patterns

def to_storage(values, dtype):
    """float array -> the array to np.save for dtype (bf16 rounded to nearest even)."""
    values = np.ascontiguousarray(values, dtype=np.float32)
    if dtype == "f32":
        return values.astype("<f4")
    if dtype == "f16":
        return values.astype("<f2")
    bits = values.view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return bits.astype("<u2")


def from_storage(array, dtype):
    """A stored array -> float64 with the exact stored values."""
    if dtype == "bf16":
        assert array.dtype == np.dtype("<u2"), array.dtype
        return (array.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    assert array.dtype == np.dtype(DESCR[dtype]), (array.dtype, dtype)
    return array.astype(np.float64)


def random_inputs(geo, directory, rng):
    """Writes uniform(-1, 1) inputs for the problem into directory; returns them as float64."""
    os.makedirs(directory, exist_ok=True)
    values = {}
    for tensor in geo.inputs():
        stored = to_storage(rng.uniform(-1.0, 1.0, geo.shape(tensor)), geo.dtype)
        np.save(os.path.join(directory, tensor + ".npy"), stored)
        values[tensor] = from_storage(stored, geo.dtype)
    return values


def load_output(geo, directory, tensor):
    """Loads an output, checking file dtype and shape; returns float64 or raises."""
    array = np.load(os.path.join(directory, tensor + ".npy"))
    if array.dtype != np.dtype(DESCR[geo.dtype]):
        raise ValueError("%s.npy: dtype %s, want %s" % (tensor, array.dtype.str, DESCR[geo.dtype]))
    if array.shape != geo.shape(tensor):
        raise ValueError("%s.npy: shape %s, want %s" % (tensor, array.shape, geo.shape(tensor)))
    if not array.flags.c_contiguous:
        raise ValueError("%s.npy: not C order" % tensor)
    return from_storage(array, geo.dtype)


def compare(got, want, tol):
    """cg_compare_within(): returns (ok, max_err, scale); NaN/inf mismatches fail."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    with np.errstate(invalid="ignore"):
        diff = np.where(got == want, 0.0, np.abs(got - want))
    diff = np.where(np.isnan(diff), np.inf, diff)
    max_err = float(diff.max()) if diff.size else 0.0
    finite = np.abs(want[np.isfinite(want)])
    scale = float(finite.max()) if finite.size else 0.0
    ok = math.isfinite(max_err) and max_err <= tol * max(scale, SCALE_FLOOR)
    return ok, max_err, scale


# ---------------------------------------------------------------------------------------------
# The torch oracle

def torch_gradients(geo, inputs):
    """dx, dw, db, y in the problem's layout, float64, computed by torch.autograd."""
    import torch
    import torch.nn.functional as F

    conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[geo.rank]

    def first(a):  # file layout -> torch's channels-first
        return np.moveaxis(a, -1, 1) if geo.channels_last else a

    def back(a):  # torch's channels-first -> file layout
        return np.moveaxis(a, 1, -1) if geo.channels_last else a

    zeros = {"x": geo.shape("x"), "w": geo.shape("w"), "dy": geo.shape("dy")}
    arrays = {t: inputs.get(t, np.zeros(zeros[t])) for t in zeros}
    x = torch.tensor(np.ascontiguousarray(first(arrays["x"])), dtype=torch.float64,
                     requires_grad=True)
    w = torch.tensor(np.ascontiguousarray(first(arrays["w"])), dtype=torch.float64,
                     requires_grad=True)
    dy = torch.tensor(np.ascontiguousarray(first(arrays["dy"])), dtype=torch.float64)
    pads = []
    for d in reversed(range(geo.rank)):  # F.pad wants the last dimension first
        pads += [geo.pad_lo[d], geo.pad_hi[d]]
    y = conv(F.pad(x, pads), w, stride=geo.stride, padding=0, dilation=geo.dil, groups=geo.g)
    assert list(y.shape[2:]) == geo.out, (list(y.shape), geo.out)
    (y * dy).sum().backward()
    spatial_and_batch = [0] + list(range(2, 2 + geo.rank))
    return {"dx": back(x.grad.numpy()), "dw": back(w.grad.numpy()),
            "db": dy.sum(dim=spatial_and_batch).numpy(), "y": back(y.detach().numpy())}


# ---------------------------------------------------------------------------------------------
# Random problems

OP_SETS = [["bwd_data"], ["bwd_weight"], ["bwd_bias"], ["fwd"],
           ["bwd_data", "bwd_weight", "bwd_bias"], ["bwd_weight", "bwd_bias"],
           ["bwd_data", "bwd_weight"], ["fwd", "bwd_data", "bwd_weight", "bwd_bias"]]


# Paths the random draws (at most 5 channels per group) never plan: Winograd F(4x4, 3x3) needs
# 16 channels each way, as does stride-2 dx's F(2, 2) (over 100 output pixels; pad_lo 0 and 1).
PINNED = [
    {"name": "wino_s2_dx_nc", "op": "bwd_data", "dtype": "f32", "layout": "NCHW", "n": 4,
     "c": 17, "k": 16, "input": [13, 11], "filter": [3, 3], "stride": [2, 2], "pad_lo": [1, 1],
     "pad_hi": [0, 1]},
    {"name": "wino_s2_dx_nl", "op": "bwd_data", "dtype": "f16", "layout": "NHWC", "n": 3,
     "c": 24, "k": 20, "input": [14, 12], "filter": [3, 3], "stride": [2, 2], "pad_lo": [0, 2],
     "pad_hi": [1, 1]},
    # a dx row of 14 tiles in one register tile of 2 vectors (40 channels padded to 64) on AVX-512
    {"name": "wino_s2_dx_row", "op": "bwd_data", "dtype": "f32", "layout": "NCHW", "n": 1,
     "c": 40, "k": 24, "input": [8, 56], "filter": [3, 3], "stride": [2, 2], "pad": [1, 1]},
    {"name": "wino_fwd_dx", "op": ["fwd", "bwd_data"], "dtype": "f32", "layout": "NCHW", "n": 2,
     "c": 20, "k": 18, "input": [9, 11], "filter": [3, 3], "pad_lo": [0, 2], "pad_hi": [2, 0]},
    {"name": "wino_dw_nc", "op": ["bwd_weight", "bwd_bias"], "dtype": "f32", "layout": "NCHW",
     "n": 2, "c": 20, "k": 24, "input": [9, 11], "filter": [3, 3], "pad_lo": [0, 2],
     "pad_hi": [1, 0]},
    {"name": "wino_dw_nl", "op": "bwd_weight", "dtype": "bf16", "layout": "NHWC", "n": 3,
     "c": 16, "k": 33, "input": [6, 13], "filter": [3, 3], "pad": [1, 1]},
]


def random_problem(rng, index):
    rank = rng.choice([1, 1, 2, 2, 2, 3])
    dtype = rng.choice(["f32", "f32", "f16", "bf16"])
    kind = rng.choice(["plain", "plain", "grouped", "depthwise"])
    if kind == "plain":
        g, cg, kg = 1, rng.randint(1, 5), rng.randint(1, 5)
    elif kind == "grouped":
        g, cg, kg = rng.randint(2, 3), rng.randint(1, 3), rng.randint(1, 3)
    else:
        g, cg, kg = rng.randint(2, 5), 1, rng.choice([1, 1, 2])
    size_range = {1: (4, 20), 2: (3, 9), 3: (2, 6)}[rank]
    filt_max = {1: 5, 2: 3, 3: 3}[rank]
    p = {"name": "t%02d" % index, "op": rng.choice(OP_SETS), "dtype": dtype,
         "layout": LAYOUTS[rank][rng.randint(0, 1)], "n": rng.randint(1, 3),
         "c": g * cg, "k": g * kg, "groups": g,
         "input": [], "filter": [], "stride": [], "dilation": []}
    pad_kind = rng.choice(["none", "sym", "asym", "asym"])
    pad_lo, pad_hi = [], []
    for _ in range(rank):
        f, d, s = rng.randint(1, filt_max), rng.randint(1, 2), rng.randint(1, 3)
        lo = hi = 0
        if pad_kind == "sym":
            lo = hi = rng.randint(0, 2)
        elif pad_kind == "asym":
            lo, hi = rng.randint(0, 2), rng.randint(0, 2)
        effective = d * (f - 1) + 1
        size = max(rng.randint(*size_range), effective - lo - hi)  # output size >= 1
        p["input"].append(size)
        p["filter"].append(f)
        p["stride"].append(s)
        p["dilation"].append(d)
        pad_lo.append(lo)
        pad_hi.append(hi)
    if pad_kind == "sym":
        p["pad"] = pad_lo
    elif pad_kind == "asym":
        if pad_lo == pad_hi:  # make sure some dim is really asymmetric
            pad_hi[0] += 1
        p["pad_lo"], p["pad_hi"] = pad_lo, pad_hi
    if len(p["op"]) == 1:
        p["op"] = p["op"][0]
    return p


def run_cli(args):
    result = subprocess.run([CONVGRAD] + args, capture_output=True, text=True)
    return result.returncode, (result.stdout + result.stderr).strip()


def describe(geo):
    pads = "pl%s ph%s" % (",".join(map(str, geo.pad_lo)), ",".join(map(str, geo.pad_hi)))
    return "%s %s %s n%d c%d k%d g%d in%s f%s s%s d%s %s" % (
        "+".join(geo.ops), geo.dtype, geo.layout, geo.n, geo.c, geo.k, geo.g,
        "x".join(map(str, geo.inp)), "x".join(map(str, geo.filt)),
        "x".join(map(str, geo.stride)), "x".join(map(str, geo.dil)), pads)


def host_isa():
    """The ISA `convgrad plan` picks on this machine (so the pack builds only that one)."""
    config = os.path.join(ROOT, "configs", "examples", "ex_3d_bwd_data.json")
    code, text = run_cli(["plan", config])
    if code != 0:
        return None
    try:
        return json.JSONDecoder().raw_decode(text[text.find("{"):])[0]["target"]["isa"]
    except (ValueError, KeyError):
        return None


def main():
    started = time.time()
    count = int(os.environ.get("CG_TORCH_CASES", "60"))
    rng = random.Random(20240611)
    problems = [random_problem(rng, i) for i in range(count)] + PINNED
    work = os.path.join(ROOT, "build", "test-packs")
    pack = os.path.join(work, "torch")
    data = os.path.join(work, "torch-data")
    config = os.path.join(work, "torch.json")
    os.makedirs(work, exist_ok=True)
    shutil.rmtree(data, ignore_errors=True)
    with open(config, "w") as f:
        json.dump({"problems": problems}, f, indent=1)

    isa = host_isa()
    gen_args = ["gen", config, "-o", pack, "--build"] + (["--isa", isa] if isa else [])
    t0 = time.time()
    code, text = run_cli(gen_args)
    print("gen+build: %s (%.1f s, isa %s)" % ("ok" if code == 0 else "FAILED", time.time() - t0,
                                              isa or "all"))
    if code != 0:
        print(text)
        print("torch: 0 passed, %d failed" % len(problems))
        return 1

    np_rng = np.random.default_rng(7)
    passed = failed = 0
    for p in problems:
        geo = Geometry(p)
        case_dir = os.path.join(data, geo.name)
        inputs = random_inputs(geo, os.path.join(case_dir, "in"), np_rng)
        want = torch_gradients(geo, inputs)
        notes, ok = [], True
        for target in ("cpu", "ref"):
            out_dir = os.path.join(case_dir, target)
            args = ["run", config, "--name", geo.name, "--target", target,
                    "--inputs", os.path.join(case_dir, "in"), "--outputs", out_dir]
            if target == "cpu":
                args += ["--pack", pack]
            code, text = run_cli(args)
            if code != 0:
                ok = False
                notes.append("%s: exit %d: %s" % (target, code, text))
                continue
            for tensor in geo.outputs():
                try:
                    got = load_output(geo, out_dir, tensor)
                except (OSError, ValueError) as error:
                    ok = False
                    notes.append("%s: %s" % (target, error))
                    continue
                tol = geo.tolerance(tensor)
                good, err, scale = compare(got, want[tensor], tol)
                rel = err / max(scale, SCALE_FLOOR)
                notes.append("%s.%s %.2g/%.2g" % (target, tensor, rel, tol))
                if not good:
                    ok = False
                    notes[-1] += " FAIL(err %.3g scale %.3g)" % (err, scale)
        passed += ok
        failed += not ok
        print("[%s] %s %s: %s" % ("PASS" if ok else "FAIL", geo.name, describe(geo),
                                  "; ".join(notes)))
    if failed == 0:
        shutil.rmtree(data, ignore_errors=True)
    print("torch: %d passed, %d failed (%.1f s)" % (passed, failed, time.time() - started))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
