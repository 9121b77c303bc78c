"""Where `ptx descriptors` spends its time on the corpus with no parameter (issue 26): the executor's runs
by kind, the any-launch sets, and their Z3 work, this tree against an earlier commit's, in one run.

    python -m benchmarks.bench_kernel_parts [--commit 994eb93] [--only NAME] [--every]

For each kernel of tests/fixtures/ptx/corpus whose file name contains --only, solver.kernel.analysis.
analyse(text) (the defaults: no parameter; --every: with the problem its manifest records, every iteration
of CTA 0, for the kernels that record one). The parts are timed by wrapping, in a subprocess per tree:
executor._Runner.run (one run of every warp; by kind: the first, "probe"; a pass answered nothing,
"pass, unanswered"; a pass answered from the run before, "pass"; the first run again after the passes,
"first again"), valuesets.run (the any-launch sets), bounds.bound and bounds.bound_across (their Z3 and
sampling inside the sets), and each bounds._enumerate (Z3's enumeration of a term's values: its outcome
and how many checks it made). Read the ratios: the machine is shared.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from benchmarks.common import against_commit

ROOT = Path(__file__).resolve().parent.parent

_PARTS = """
import collections, json, lzma, sys, time
sys.path.insert(0, sys.argv[1]); sys.path.insert(1, sys.argv[2])
from benchmarks.bench_kernel_reader import _kernels
from solver.kernel import analysis
from solver.kernel.concrete import executor
from solver.kernel.symbolic import bounds, valuesets
import solver
assert solver.__file__.startswith(sys.argv[1]), solver.__file__
seconds, counts = collections.Counter(), collections.Counter()

def timing(name, function, kind=None):
    def wrapped(*args, **kwargs):
        began = time.perf_counter()
        result = function(*args, **kwargs)
        key = kind(args, result) if kind else name
        seconds[key] += time.perf_counter() - began
        counts[key] += 1
        return result
    return wrapped

def run_kind(args, result):
    shared = args[1]
    if shared is None:
        return "run: first again"
    if shared.answers is None:
        return "run: probe" if not shared.log.watched else "run: pass, unanswered"
    return "run: pass"

def enumeration(args, result):
    return f"z3 enumeration: {result[0]}"

executor._Runner.run = timing("", executor._Runner.run, run_kind)
valuesets.run = timing("any-launch sets", valuesets.run)
bounds.bound = timing("bounds.bound", bounds.bound)
bounds.bound_across = timing("bounds.bound_across", bounds.bound_across)
checks = [0]
enumerate_values = bounds._enumerate
def counted(term, values, assumptions, constant, budget):
    before = budget[0]
    result = enumerate_values(term, values, assumptions, constant, budget)
    checks[0] += before - budget[0]
    return result
bounds._enumerate = timing("", counted, enumeration)
began = time.perf_counter()
for folder, entry in _kernels(sys.argv[3]):
    text = lzma.open(folder / entry["file"], "rt").read()
    if sys.argv[4] == "every":
        if not entry.get("params"):
            continue
        grid = (entry.get("problem") or {}).get("grid")
        analysis.analyse(text, launch=executor.Launch(params=dict(entry["params"]), grid=tuple(grid) if grid else None))
    else:
        analysis.analyse(text)
seconds["all"] = time.perf_counter() - began
counts["all"] = 1
counts["z3 checks in enumerations"] = checks[0]
print(json.dumps({"seconds": seconds, "counts": counts}))
"""


def _parts(code_root: Path, only: str, every: bool) -> dict:
    mode = "every" if every else "default"
    out = subprocess.run([sys.executable, "-c", _PARTS, str(code_root), str(ROOT), only, mode],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--commit", default="994eb93")
    parser.add_argument("--only", default="")
    parser.add_argument("--every", action="store_true", help="every iteration of the recorded problem")
    args = parser.parse_args(argv)
    before, after = against_commit(args.commit, lambda root: _parts(root, args.only, args.every), "bench_kernel_parts")
    names = sorted(set(before["counts"]) | set(after["counts"]), key=lambda n: (n == "all", n))
    print(f"{'part':34s} {'before: count':>14s} {'s':>7s} {'now: count':>11s} {'s':>7s}")
    for name in names:
        print(f"{name:34s} {before['counts'].get(name, 0):14d} {before['seconds'].get(name, 0):7.2f} "
              f"{after['counts'].get(name, 0):11d} {after['seconds'].get(name, 0):7.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
