"""Throughput of `layoutproof fuzz`: labelled cases per second, per target.

    python -m benchmarks.bench_fuzz [--count N] [--repeat R] [--arch A]

For each target (desc, tensormap, recipe when present) and each request (valid cases, and one rule to
break that the target can break alone), one untimed warm-up run (seed 0, 50 cases: imports, Z3 context,
spec tables) and then R timed runs of N cases with seeds 1..R (time.perf_counter around the whole
generator: Z3 anchors, sampling, spec labels and the record with its rule sources). The table gives
the median cases per second and the share of the time the Z3 anchors took. The baseline, measured in
the same process, is one Z3 solve per case (what generation would cost without sampling): the
Problem's next() timed over 20 anchors.
"""
from __future__ import annotations

import argparse
import importlib
import time

from benchmarks.common import median, table
from solver.fuzz import engine as fuzz

REQUESTS = {"desc": ("desc.tile.stride_byte_offset",), "tensormap": ("tma.map.box_swizzle_span",),
            "recipe": ()}


def _throughput(target, arch, violate, count, seed):
    stats = fuzz.Stats()
    began = time.perf_counter()
    produced = sum(1 for _ in fuzz.generate(target, arch, frozenset(violate), count, seed, stats))
    return produced, time.perf_counter() - began, stats


def _anchor_seconds(target, arch, violate):
    module = importlib.import_module(f"solver.fuzz.{target}")
    if target == "tensormap":
        problem = module.model.Problem("tiled", arch, break_=set(violate))
    else:
        problem = module.model.Problem(arch, set(violate))
    began = time.perf_counter()
    for seed in range(20):
        problem.next(seed)
    return (time.perf_counter() - began) / 20


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--arch", default="sm90")
    args = parser.parse_args()
    rows = []
    for target in fuzz.TARGETS:
        try:
            fuzz.target_module(target)
        except ImportError:
            continue
        for violate in [()] + [(r,) for r in REQUESTS.get(target, ())]:
            _throughput(target, args.arch, violate, 50, 0)                       # warm-up
            runs = [_throughput(target, args.arch, violate, args.count, seed) for seed in range(1, args.repeat + 1)]
            rates = [n / s for n, s, _ in runs]
            anchor = _anchor_seconds(target, args.arch, violate) if target != "recipe" else float("nan")
            rows.append([target, ",".join(violate) or "valid", runs[0][0], f"{median(rates):.0f}",
                         f"{min(rates):.0f}", f"{1 / anchor:.0f}" if anchor == anchor else "-",
                         f"{median(rates) * anchor:.0f}x" if anchor == anchor else "-"])
    print(table(["target", "request", "cases", "cases/s (median)", "cases/s (min)",
                 "baseline: Z3 solves/s", "speed-up"], rows))


if __name__ == "__main__":
    main()
