"""What a hypothesis test of a user's descriptor builder pays per example, on the largest tiles the public
strategies draw (layoutproof.strategies; issue 29: a 200-row `check` took 252 ms, past hypothesis's 200 ms
default deadline).

    python -m benchmarks.bench_strategies

For each arch, the default pool's record with the most rows and the one with the most elements: the best of
3 runs of same_reads, of the failure message, of what `layoutproof check` runs (in-process) and of the
fuzz label, in ms, and each as a fraction of hypothesis's 200 ms deadline.
"""
from __future__ import annotations

import time

from benchmarks.common import table
from layoutproof import strategies
from solver.fuzz import compare
from solver.fuzz import desc as fuzz_desc
from solver.fuzz import strategies as fuzz_strategies
from solver.synth import descriptor as synth

ARCHES = ("sm90", "sm100", "sm103")
SIZES = {"rows": lambda case: (case["mn"], case["k"]), "elements": lambda case: case["mn"] * case["k"]}
DEADLINE = 0.200


def _largest(arch: str, size: str) -> dict:
    """The default pool's record of the most rows (then K), or of the most elements read."""
    pool = fuzz_strategies._records("desc", arch, (), fuzz_strategies.POOL_SIZE, 0)
    return max(pool, key=lambda record: SIZES[size](record["case"]))


def _best_of(times: int, call) -> float:
    spent = []
    for _ in range(times):
        start = time.perf_counter()
        call()
        spent.append(time.perf_counter() - start)
    return min(spent)


def main() -> None:
    rows = []
    for arch in ARCHES:
        for size in SIZES:
            record = _largest(arch, size)
            case = record["case"]
            word = int(case["descriptor"], 16)
            moved = word ^ 1                       # the start address 16 bytes away: every element moves

            def layoutproof_check():
                tile = synth.make_tile(arch, case["dtype"], case["major"], case["mn"], case["layout"],
                                       case["start_address"], case["k"], 0, case["kind"])
                return synth.check(tile, compare.as_descriptor(moved, arch))
            timings = [_best_of(3, lambda: strategies.same_reads(word, moved, record)),
                       _best_of(3, lambda: strategies.reads_message(word, moved, record)),
                       _best_of(3, layoutproof_check), _best_of(3, lambda: fuzz_desc.label(case, arch))]
            rows.append([arch, f"{case['mn']}x{case['k']}", *(f"{t * 1000:.1f} ({t / DEADLINE:.2f})" for t in timings)])
    print(table(["arch", "tile", "same_reads", "message", "check", "label"], rows))


if __name__ == "__main__":
    main()
