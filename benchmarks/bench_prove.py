"""Benchmarks of the prover: the whole catalogue, and Z3 against exhaustive enumeration by spec/.

    python -m benchmarks.bench_prove [--repeat N] [--json FILE]

1. The catalogue: every property of solver.prove.catalogue.all_properties() through solver.prove.prover.prove
   (timeout 30 s each), in process; one table row per property (median seconds over the repeats), the
   total wall time of one pass, and whether every status equals its expected status. When the command
   line has `layoutproof prove --all` (docs/CLI.md), its wall time in a fresh process is timed too
   (without --save, so that the benchmark writes no counterexample files).
2. Bijectivity of swizzled layouts, Z3 against enumeration, in the same run: the CuTe ComposedLayout
   Sw<3,4,3> o L with L a compact layout of 2^n byte offsets. Enumeration evaluates spec's
   ComposedLayout on every index and counts distinct images; Z3 proves "for all x != y in [0, 2^n):
   f(x) != f(y)" (unsat of x != y and f(x) == f(y)) with solver.model.swizzle.cute_swizzle over the
   layout written here in bit-vectors. Sizes 2^10 .. 2^20 are measured both ways; larger sizes are
   measured with Z3 only and the enumeration time is EXTRAPOLATED linearly from the largest measured
   size (the enumeration is one evaluation per index).
3. One canonical-layout injectivity property (canonical.injective.MN.128B.16bit) through prove, against
   enumerating spec's read map (spec.mma.readmap.element_address) over a small grid of LBO/SBO values;
   the time for the full 14-bit x 14-bit LBO/SBO grid (2^28 descriptors) is EXTRAPOLATED.

The machine this was written for has 2 noisy cores: compare the ratios printed by one run, not
absolute times across runs. Every measurement is repeated --repeat times and the median is reported;
the two sides of each comparison are timed back to back, inside one repeat.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import time

import z3

from solver.prove import layout as layout_properties
from benchmarks.common import environment, fmt_ratio, fmt_s, human_duration, median, table, timed
from solver.model.bitvec import bv, evaluate, in_range, narrow, var
from solver.prove.catalogue import all_properties
from solver.prove.prover import forget_proofs, prove
from solver.model.swizzle import cute_swizzle
from spec.mma import descriptor as spec_descriptor
from spec.mma import readmap as spec_readmap
from spec.cute.layout import ComposedLayout, Layout, flatten
from spec.cute.swizzle import Swizzle

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CATALOGUE_AIM_S = 30.0
RATIO_AIM = 1000.0
RATIO_AIM_EXP = 20


def bench_catalogue(repeat: int, timeout: float) -> dict:
    properties, register_s = timed(all_properties)
    seconds = {p.id: [] for p in properties}
    statuses = {p.id: [] for p in properties}
    passes = []
    for _ in range(repeat):
        gc.collect()
        forget_proofs()                 # each pass proves afresh (prover._PROVED would answer a repeat)
        began = time.perf_counter()
        for p in properties:
            result = prove(p, timeout)
            seconds[p.id].append(result.seconds)
            statuses[p.id].append(result.status)
        passes.append(time.perf_counter() - began)
    rows = []
    for p in properties:
        seen = sorted(set(statuses[p.id]))
        rows.append({"id": p.id, "expected": p.expected, "statuses": statuses[p.id],
                     "status": seen[0] if len(seen) == 1 else "/".join(seen),
                     "matched": all(s == p.expected for s in statuses[p.id]),
                     "seconds": seconds[p.id], "median_s": median(seconds[p.id])})
    return {"timeout_s": timeout, "count": len(properties), "register_s": register_s,
            "pass_s": passes, "median_pass_s": median(passes),
            "all_matched": all(r["matched"] for r in rows), "properties": rows}


def print_catalogue(c: dict, repeat: int) -> None:
    print(f"== 1. catalogue: {c['count']} properties through solver.prove.prover.prove "
          f"(timeout {c['timeout_s']:g} s each), {repeat} pass(es), median seconds per property ==")
    rows = [(r["id"], r["status"], r["expected"], "yes" if r["matched"] else "NO", f"{r['median_s']:.3f}")
            for r in c["properties"]]
    print(table(("property", "status", "expected", "match", "seconds"), rows))
    slowest = sorted(c["properties"], key=lambda r: -r["median_s"])[:3]
    print(f"catalogue import + registration: {c['register_s']:.3f} s (once)")
    print("whole catalogue, one pass (s): " + ", ".join(f"{s:.2f}" for s in c["pass_s"])
          + f"; median {c['median_pass_s']:.2f} s; aim < {CATALOGUE_AIM_S:g} s: "
          + ("met" if max(c["pass_s"]) < CATALOGUE_AIM_S else "NOT met"))
    print("slowest: " + ", ".join(f"{r['id']} {r['median_s']:.3f} s" for r in slowest))
    print("every status matched its expected status: " + ("yes" if c["all_matched"] else "NO"))


def bench_cli(repeat: int, timeout: float) -> dict:
    """`layoutproof prove --all` in a fresh interpreter (imports included), if the command exists."""
    # no --save: a benchmark must not add counterexample files to the repository
    argv = [sys.executable, "-m", "layoutproof", "prove", "--all", "--timeout", f"{timeout:g}", "--json"]
    runs = []
    for _ in range(repeat):
        began = time.perf_counter()
        done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
        wall = time.perf_counter() - began
        if done.returncode == 2 and "invalid choice" in done.stderr:
            return {"available": False, "command": " ".join(argv[1:]), "stderr": done.stderr.strip()}
        run = {"wall_s": wall, "exit": done.returncode}
        try:
            results = json.loads(done.stdout)["results"]
            run["results"] = len(results)
            run["all_matched"] = all(r["status"] == r["expected"] for r in results)
        except (ValueError, KeyError, TypeError):
            run["unparsed_stdout_head"] = done.stdout[:200]
        runs.append(run)
    return {"available": True, "command": " ".join(argv[1:]), "runs": runs,
            "median_wall_s": median([r["wall_s"] for r in runs])}


def print_cli(c: dict) -> None:
    print(f"== 1b. `python {c['command']}` in a fresh process ==")
    if not c["available"]:
        last = c["stderr"].splitlines()[-1] if c["stderr"] else ""
        print("not available in this tree (the command line has no `prove` subcommand yet): " + last)
        return
    for r in c["runs"]:
        extra = f", {r['results']} results, all matched: {r['all_matched']}" if "results" in r else \
            ", stdout not the JSON of docs/CLI.md"
        print(f"wall {r['wall_s']:.2f} s, exit {r['exit']}{extra}")
    print(f"median wall {c['median_wall_s']:.2f} s; aim < {CATALOGUE_AIM_S:g} s: "
          + ("met" if max(r["wall_s"] for r in c["runs"]) < CATALOGUE_AIM_S else "NOT met"))


# --- 2. bijectivity of swizzled layouts: Z3 against enumeration -------------------------------------------
SWIZZLE = Swizzle(3, 4, 3)
BROKEN = Swizzle(3, 4, 0)      # S = 0: not a bijection; the control case


def layouts(n: int) -> list:
    """(name, spec Layout) pairs: compact layouts of 2^n byte offsets."""
    size = 1 << n
    return [("(2^n):(1)", Layout((size,), (1,))),
            ("(2^n/64,64):(64,1)", Layout((size // 64, 64), (64, 1)))]


def z3_layout(layout: Layout, x):
    """The spec Layout as a bit-vector function of a 1-D index (flat integer shapes): the index is split
    colexicographically (rule layout.colexicographic) and dotted with the strides."""
    shape, stride = flatten(layout.shape), flatten(layout.stride)
    offset, rest = bv(0), x
    for k, (s, d) in enumerate(zip(shape, stride)):
        coordinate = rest if k == len(shape) - 1 else z3.URem(rest, bv(s))
        rest = z3.UDiv(rest, bv(s))
        offset = offset + coordinate * bv(d)
    return offset


def z3_composed(composed: ComposedLayout, x):
    sw = composed.swizzle
    return cute_swizzle(bv(composed.offset) + z3_layout(composed.layout, x), sw.bits, sw.base, sw.shift)


def check_encoding(composed: ComposedLayout, samples: int = 64) -> None:
    """The bit-vector layout agrees with spec's ComposedLayout on sample indices (else the comparison
    would compare two different functions)."""
    x = var("x")
    expr = z3_composed(composed, x)
    size = composed.size()
    for i in sorted({0, size - 1} | {(i * 2654435761) % size for i in range(samples)}):
        assert evaluate(expr, {"x": i}) == composed(i), (composed.notation(), i)


def enumerate_bijective(composed: ComposedLayout) -> bool:
    """Evaluate spec's ComposedLayout on every index; bijective onto its image iff 2^n distinct values."""
    size = composed.size()
    return len({composed(i) for i in range(size)}) == size


def z3_bijective(composed: ComposedLayout, timeout: float):
    """Build and check: x != y in [0, 2^n) with f(x) == f(y); unsat = proved injective.
    Returns (answer, build + check seconds, check-only seconds)."""
    began = time.perf_counter()
    size = composed.size()
    bits = size.bit_length() - 1
    # The index range is structural for a power-of-two size (an n-bit unknown, zero-extended), as in
    # the catalogue's queries (solver.model.bitvec.narrow); otherwise it is an assumption.
    if size == 1 << bits:
        x, y, ranges = narrow("x", bits), narrow("y", bits), []
    else:
        x, y = var("x"), var("y")
        ranges = [in_range(x, 0, size), in_range(y, 0, size)]
    solver = z3.Solver()
    solver.set("timeout", int(timeout * 1000))
    solver.add(*ranges, x != y, z3_composed(composed, x) == z3_composed(composed, y))
    built = time.perf_counter()
    answer = solver.check()
    done = time.perf_counter()
    return str(answer), done - began, done - built


def bench_bijectivity(repeat: int, measured: list, z3_only: list, timeout: float) -> dict:
    rows = []
    for n in measured + z3_only:
        for name, layout in layouts(n):
            composed = ComposedLayout(SWIZZLE, 0, layout)
            if n == measured[0]:
                check_encoding(composed)
            row = {"n": n, "size": 1 << n, "layout": name, "notation": composed.notation(),
                   "enumerated": n in measured, "enum_s": [], "z3_s": [], "z3_check_s": []}
            for _ in range(repeat):
                if row["enumerated"]:
                    verdict, seconds = timed(enumerate_bijective, composed)
                    row["enum_verdict"] = verdict
                    row["enum_s"].append(seconds)
                gc.collect()
                answer, total, check = z3_bijective(composed, timeout)
                row["z3_answer"] = answer
                row["z3_s"].append(total)
                row["z3_check_s"].append(check)
            row["z3_median_s"] = median(row["z3_s"])
            row["z3_check_median_s"] = median(row["z3_check_s"])
            if row["enumerated"]:
                row["enum_median_s"] = median(row["enum_s"])
            rows.append(row)
    # extrapolation: linear in the number of indices, at the per-index rate of the largest measured size
    rate = {}
    for row in rows:
        if row["enumerated"] and row["n"] == measured[-1]:
            rate[row["layout"]] = row["enum_median_s"] / row["size"]
    for row in rows:
        if not row["enumerated"]:
            row["enum_extrapolated_s"] = rate[row["layout"]] * row["size"]
        enum = row.get("enum_median_s", row.get("enum_extrapolated_s"))
        row["ratio"] = enum / row["z3_median_s"]
        row["ratio_check_only"] = enum / row["z3_check_median_s"]
    # control: a swizzle that is not a bijection must be caught by both
    controls = []
    for name, layout in layouts(measured[0] + 2):
        composed = ComposedLayout(BROKEN, 0, layout)
        check_encoding(composed)
        verdict, seconds = timed(enumerate_bijective, composed)
        answer, total, _ = z3_bijective(composed, timeout)
        controls.append({"notation": composed.notation(), "layout": name, "enum_verdict": verdict,
                         "enum_s": seconds, "z3_answer": answer, "z3_s": total,
                         "ok": verdict is False and answer == "sat"})
    return {"swizzle": SWIZZLE.notation(), "rows": rows, "enum_rate_s_per_index": rate,
            "extrapolated_from_n": measured[-1], "controls": controls}


def print_bijectivity(b: dict, repeat: int) -> None:
    print(f"== 2. bijectivity of {b['swizzle']} o L, L a compact layout of 2^n byte offsets: "
          f"spec enumeration vs Z3, medians of {repeat} ==")
    rows = []
    for r in b["rows"]:
        if r["enumerated"]:
            enum = fmt_s(r["enum_median_s"])
            verdict = "bijective" if r["enum_verdict"] else "NOT bijective"
        else:
            enum = f"{fmt_s(r['enum_extrapolated_s'])} (extrapolated)"
            verdict = "not run"
        z3_verdict = {"unsat": "proved", "sat": "REFUTED"}.get(r["z3_answer"], r["z3_answer"])
        label = "" if r["enumerated"] else " (extrapolated)"
        rows.append((f"2^{r['n']}", r["layout"], enum, verdict, fmt_s(r["z3_median_s"]),
                     fmt_s(r["z3_check_median_s"]), z3_verdict, fmt_ratio(r["ratio"]) + label,
                     fmt_ratio(r["ratio_check_only"]) + label))
    print(table(("size", "layout L", "enumerate s", "enum verdict", "z3 s (build+check)", "z3 check s",
                 "z3 verdict", "enum/z3", "enum/z3 check"), rows))
    print(f"extrapolated rows: enumeration time = (median time per index at 2^{b['extrapolated_from_n']}) "
          "x 2^n; not measured.")
    for c in b["controls"]:
        print(f"control {c['notation']} (S=0, not a bijection): enumeration says "
              f"{'bijective' if c['enum_verdict'] else 'not bijective'} ({c['enum_s']:.3f} s), "
              f"Z3 says {c['z3_answer']} ({c['z3_s']:.4f} s): {'ok' if c['ok'] else 'WRONG'}")
    at_aim = [r for r in b["rows"] if r["n"] == RATIO_AIM_EXP and r["enumerated"]]
    for r in at_aim:
        print(f"2^{RATIO_AIM_EXP} {r['layout']}: measured enum/Z3 = {fmt_ratio(r['ratio'])} "
              f"(aim >= {RATIO_AIM:,.0f}x: {'met' if r['ratio'] >= RATIO_AIM else 'NOT met'}); "
              f"against Z3's check alone {fmt_ratio(r['ratio_check_only'])}")


# --- 3. canonical-layout injectivity: the property against enumerating spec's read map -------------------
CANONICAL = ("MN", "128B", 16)
CANONICAL_ID = "canonical.injective.MN.128B.16bit"
GRID = (0, 16, 512, 1024, 2048, 4096, 32768, 262128)     # LBO and SBO values, multiples of 16 < 2^18
MAX_REPEATS = 16                                          # blocks along MN, as the property states


def _condition(lbo: int, sbo: int, n: int) -> bool:
    """The property's own stride condition (layout_properties._disjoint_condition) on concrete values."""
    major, swizzle, _ = CANONICAL
    _, _, block, along_k = layout_properties._extent(layout_properties._shape(*CANONICAL), 1)
    s_mn, s_k = (sbo, lbo) if major == "K" or swizzle == "none" else (lbo, sbo)
    cond = layout_properties._disjoint_condition(z3.IntVal(s_mn), z3.IntVal(s_k), block, z3.IntVal(n),
                                                 along_k)
    return z3.is_true(z3.simplify(cond))


def enumerate_canonical(grid) -> dict:
    """For each (LBO, SBO) of the grid (start 0, base offset 0, sm100): walk the read map block by block
    along MN (n = 1 .. 16 blocks) and, wherever the condition holds for n, check that no two elements
    read so far share a bit (the property's claim, spec's addresses)."""
    major, swizzle, bits = CANONICAL
    shape = layout_properties._shape(*CANONICAL)
    mn_per_block, k_extent, _, _ = layout_properties._extent(shape, 1)
    held = violated = collisions_outside = descriptors = 0
    conditions = {(lbo, sbo, n): _condition(lbo, sbo, n) for lbo in grid for sbo in grid
                  for n in range(1, MAX_REPEATS + 1)}
    began = time.perf_counter()
    for lbo in grid:
        for sbo in grid:
            descriptors += 1
            desc = spec_descriptor.encode("sm100", 0, lbo, sbo, swizzle, 0)
            op = spec_readmap.make_operand(desc, "bf16", major, mn_per_block * MAX_REPEATS, k_extent)
            per_chunk = op.elements_per_chunk
            seen, collided = set(), False
            for n in range(1, MAX_REPEATS + 1):
                for mn in range((n - 1) * mn_per_block, n * mn_per_block):
                    bit = (mn % per_chunk) * bits % 8
                    for k in range(k_extent):
                        address = spec_readmap.element_address(op, mn, k) * 8 + bit
                        if address in seen:
                            collided = True
                        seen.add(address)
                if conditions[(lbo, sbo, n)]:
                    held += 1
                    violated += collided
                elif collided:
                    collisions_outside += 1
    seconds = time.perf_counter() - began
    return {"descriptors": descriptors, "pairs_condition_held": held, "pairs_violating": violated,
            "pairs_colliding_without_condition": collisions_outside, "seconds": seconds,
            "elements_per_descriptor": mn_per_block * MAX_REPEATS * k_extent}


def bench_canonical(repeat: int, timeout: float) -> dict:
    prop = next(p for p in all_properties() if p.id == CANONICAL_ID)
    runs, z3_runs, statuses = [], [], []
    for _ in range(repeat):
        gc.collect()
        runs.append(enumerate_canonical(GRID))
        gc.collect()
        forget_proofs()
        result = prove(prop, timeout)
        z3_runs.append(result.seconds)
        statuses.append(result.status)
    enum_s = median([r["seconds"] for r in runs])
    per_descriptor = enum_s / runs[0]["descriptors"]
    full_grid = 1 << 28                       # every 14-bit LBO x every 14-bit SBO encoding
    full_domain = full_grid * (1 << 14) * 8   # x every start encoding x every base offset
    z3_s = median(z3_runs)
    return {"property": CANONICAL_ID, "grid": list(GRID), "enumeration": runs[-1],
            "enum_s": [r["seconds"] for r in runs], "enum_median_s": enum_s,
            "per_descriptor_s": per_descriptor, "z3_s": z3_runs,
            "z3_median_s": z3_s, "z3_statuses": statuses,
            "extrapolated_full_grid_s": per_descriptor * full_grid,
            "extrapolated_full_domain_s": per_descriptor * full_domain,
            "ratio_grid_measured": enum_s / z3_s,
            "ratio_full_grid_extrapolated": per_descriptor * full_grid / z3_s,
            "ratio_full_domain_extrapolated": per_descriptor * full_domain / z3_s}


def print_canonical(c: dict, repeat: int) -> None:
    e = c["enumeration"]
    print(f"== 3. {c['property']}: Z3 (prove, whole domain) vs enumerating spec's read map, "
          f"medians of {repeat} ==")
    print(f"grid: LBO, SBO in {tuple(c['grid'])} ({e['descriptors']} descriptors, start 0, base offset 0, "
          f"sm100), 1..{MAX_REPEATS} blocks along MN, {e['elements_per_descriptor']} elements read per "
          "descriptor")
    print(f"(descriptor, blocks) pairs where the condition holds: {e['pairs_condition_held']}, of which "
          f"non-injective: {e['pairs_violating']} (the property predicts 0); pairs outside the condition "
          f"that collide: {e['pairs_colliding_without_condition']}")
    rows = [("enumerate the grid (measured)", f"{e['descriptors']}", fmt_s(c["enum_median_s"]),
             fmt_ratio(c["ratio_grid_measured"])),
            ("enumerate 14-bit LBO x 14-bit SBO (EXTRAPOLATED)", "2^28",
             f"{c['extrapolated_full_grid_s']:.3g} ({human_duration(c['extrapolated_full_grid_s'])})",
             fmt_ratio(c["ratio_full_grid_extrapolated"])),
            ("... x 2^14 starts x 8 base offsets (EXTRAPOLATED)", "2^45",
             f"{c['extrapolated_full_domain_s']:.3g} ({human_duration(c['extrapolated_full_domain_s'])})",
             fmt_ratio(c["ratio_full_domain_extrapolated"])),
            (f"Z3: prove {c['property']} (every start, LBO, SBO, base offset, 1..16 blocks)", "all",
             fmt_s(c["z3_median_s"]), "1x")]
    print(table(("method", "descriptors", "seconds", "vs Z3"), rows))
    print(f"Z3 status: {'/'.join(sorted(set(c['z3_statuses'])))}; extrapolation: "
          f"{fmt_s(c['per_descriptor_s'])} s per descriptor (median) x the number of descriptors")


# --- main ---------------------------------------------------------------------------------------------------
def parse_exps(text: str) -> list:
    return [int(t) for t in text.split(",") if t.strip()]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_prove",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="repetitions of every measurement (median "
                        "reported; default 3)")
    parser.add_argument("--json", metavar="FILE", help="also write the raw numbers to FILE")
    parser.add_argument("--timeout", type=float, default=30.0, help="per-property / per-query Z3 timeout (s)")
    parser.add_argument("--enum-exps", type=parse_exps, default=[10, 12, 14, 16, 18, 20],
                        help="log2 sizes enumerated and proved (default 10,12,14,16,18,20)")
    parser.add_argument("--z3-only-exps", type=parse_exps, default=[24, 28],
                        help="log2 sizes proved by Z3 only, enumeration extrapolated (default 24,28)")
    parser.add_argument("--skip", action="append", default=[], choices=("catalogue", "cli", "bijectivity",
                        "canonical"), help="leave a section out (repeatable)")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be >= 1")
    if not args.enum_exps or any(not 6 <= n <= 30 for n in args.enum_exps + args.z3_only_exps):
        parser.error("sizes are log2 values in [6, 30] (the Z3 model uses 32-bit vectors; the 2-D layout "
                     "has rows of 64)")

    began = time.perf_counter()
    given = argv if argv is not None else sys.argv[1:]
    report = {"command": "python -m benchmarks.bench_prove " + " ".join(given),
              "repeat": args.repeat, "environment": environment()}
    env = report["environment"]
    print(f"machine: nproc {env['nproc']} (affinity {env['sched_getaffinity']}), python {env['python']}, "
          f"z3 {env['z3']}, {env['platform']}")
    print(f"repeat {args.repeat}; ratios compare medians measured in this run\n")
    if "catalogue" not in args.skip:
        report["catalogue"] = bench_catalogue(args.repeat, args.timeout)
        print_catalogue(report["catalogue"], args.repeat)
        print()
    if "cli" not in args.skip:
        report["cli"] = bench_cli(args.repeat, args.timeout)
        print_cli(report["cli"])
        print()
    if "bijectivity" not in args.skip:
        report["bijectivity"] = bench_bijectivity(args.repeat, sorted(args.enum_exps),
                                                  sorted(args.z3_only_exps), args.timeout)
        print_bijectivity(report["bijectivity"], args.repeat)
        print()
    if "canonical" not in args.skip:
        report["canonical"] = bench_canonical(args.repeat, args.timeout)
        print_canonical(report["canonical"], args.repeat)
        print()
    report["benchmark_wall_s"] = time.perf_counter() - began
    print(f"benchmark wall time: {report['benchmark_wall_s']:.1f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
            f.write("\n")
        print(f"raw numbers: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
