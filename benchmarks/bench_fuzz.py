"""Throughput of `layoutproof fuzz`: labelled cases per second, per target.

    python -m benchmarks.bench_fuzz [--count N] [--repeat R] [--arch A ...] [--target T ...] [--every-rule]

For each target (every one of `layoutproof fuzz`, or those named with --target) and each request (valid
cases, and one rule to break that the target can break alone; with --every-rule each of the target's
rules), one untimed warm-up run (seed 0, 50 cases: imports, Z3 context,
spec tables) and then R timed runs of N cases with seeds 1..R (time.perf_counter around the whole
generator: Z3 anchors, sampling, spec labels and the record with its rule sources). The table gives
the median cases per second and the share of the time the Z3 anchors took. The baseline, measured in
the same process, is one Z3 solve per case (what generation would cost without sampling): the
Problem's next() timed over 20 anchors (tensormap: with the fuzzer's Z3 budget, a query past it counted
at its cost). The arch is --arch (repeatable: each in turn), else sm100 for tmem and tmem-alloc, which
need tensor memory, and sm90 for the others. A request no case of the arch can meet (a rule of another
arch) gives 0 cases and is left out of the last line: the minimum rate over the requests, per target.
"""
from __future__ import annotations

import argparse
import time

from benchmarks.common import median, table
from solver.fuzz import engine as fuzz

DEFAULT_ARCH = {"tmem": "sm100", "tmem-alloc": "sm100"}

REQUESTS = {"desc": ("desc.tile.stride_byte_offset",), "tensormap": ("tma.map.box_swizzle_span",),
            "recipe": (), "tmem-alloc": ("tmem.alloc.capacity",)}


def _throughput(target, arch, violate, count, seed):
    stats = fuzz.Stats()
    began = time.perf_counter()
    produced = sum(1 for _ in fuzz.generate(target, arch, frozenset(violate), count, seed, stats))
    return produced, time.perf_counter() - began, stats


def _anchor_seconds(target, arch, violate):
    module = fuzz.target_module(target)
    anchors = getattr(module, "sampling", module.model)     # the target's sampling module, else its model
    if target == "tensormap":
        problem = anchors.Problem("tiled", arch, break_=set(violate), budget=module.ANCHOR_BUDGET)
    else:
        problem = anchors.Problem(arch, set(violate))
    began = time.perf_counter()
    for seed in range(20):
        try:
            problem.next(seed)
        except RuntimeError:            # Undecided (past the budget): counted at its cost
            pass
    return (time.perf_counter() - began) / 20


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--arch", action="append", help="default: sm100 for tmem and tmem-alloc, else sm90 (repeatable)")
    parser.add_argument("--target", action="append", choices=fuzz.TARGETS, help="only this target (repeatable)")
    parser.add_argument("--every-rule", action="store_true", help="every rule of the target, not one sample")
    args = parser.parse_args()
    rows, lowest = [], {}
    for target in args.target or fuzz.TARGETS:
        try:
            module = fuzz.target_module(target)
        except ImportError:
            continue
        for arch in args.arch or [DEFAULT_ARCH.get(target, "sm90")]:
            rules = module.RULE_IDS if args.every_rule else REQUESTS.get(target, ())
            for violate in [()] + [(r,) for r in rules]:
                _throughput(target, arch, violate, 50, 0)                       # warm-up
                runs = [_throughput(target, arch, violate, args.count, seed) for seed in range(1, args.repeat + 1)]
                rates = [n / s for n, s, _ in runs]
                request = ",".join(violate) or "valid"
                if runs[0][0] == 0:
                    rows.append([target, arch, request, 0, "-", "-", "-", "-"])
                    continue
                anchor = _anchor_seconds(target, arch, violate) if target not in ("recipe",) else float("nan")
                rows.append([target, arch, request, runs[0][0], f"{median(rates):.0f}",
                             f"{min(rates):.0f}", f"{1 / anchor:.0f}" if anchor == anchor else "-",
                             f"{median(rates) * anchor:.0f}x" if anchor == anchor else "-"])
                if target not in lowest or median(rates) < lowest[target][0]:
                    lowest[target] = (median(rates), f"{arch} {request}")
    print(table(["target", "arch", "request", "cases", "cases/s (median)", "cases/s (min)",
                 "baseline: Z3 solves/s", "speed-up"], rows))
    for target, (rate, request) in lowest.items():
        print(f"minimum over requests, {target}: {rate:.0f} cases/s ({request})")

if __name__ == "__main__":
    main()
