"""Wall time of `layoutproof fuzz --against CMD` by number of adapter processes (`--jobs N`).

    python -m benchmarks.bench_fuzz_against [--count N] [--repeat R] [--jobs J ...] [--against CMD]
                                            [--target T] [--arch A]

Each run is a whole process (`python -m solver.cli.main fuzz --target T --arch A --count N --seed 0
--against CMD --jobs J`: start-up, generation, the adapters' start and every case they judge), timed
with time.perf_counter around it; the --jobs values take turns within each repeat, so that a load
that comes and goes falls on all of them. The table gives the minimum and the median wall time and
the ratio of each minimum to that of the first --jobs value; every run's stdout, stderr and exit
status must be those of the first (the same output for every number of processes). The default
adapter is ptxas (`python -m solver.fuzz.adapters.ptxas`, which needs ptxas on PATH) on sm90 desc cases.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

from benchmarks.common import median, table

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(argv: list) -> tuple:
    began = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT)
    return time.perf_counter() - began, (done.returncode, done.stdout, done.stderr)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_fuzz_against", description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jobs", type=int, action="append", help="repeatable (default: 1 and 2)")
    parser.add_argument("--against", default=f"{sys.executable} -m solver.fuzz.adapters.ptxas")
    parser.add_argument("--target", default="desc")
    parser.add_argument("--arch", default="sm90")
    args = parser.parse_args(argv)
    jobs = args.jobs or [1, 2]
    base = [sys.executable, "-m", "solver.cli.main", "fuzz", "--target", args.target, "--arch", args.arch,
            "--count", str(args.count), "--seed", "0", "--against", args.against]
    walls: dict = {j: [] for j in jobs}
    first = None
    for _ in range(args.repeat):
        for j in jobs:
            seconds, output = _run(base + ["--jobs", str(j)])
            first = first or output
            if output != first:
                print(f"--jobs {j}: output differs from --jobs {jobs[0]}'s (exit {output[0]}: "
                      f"{output[2].strip()[:200]})", file=sys.stderr)
                return 1
            walls[j].append(seconds)
    print(f"fuzz --target {args.target} --arch {args.arch} --count {args.count} --against {args.against!r}; "
          f"{args.repeat} runs each, {os.cpu_count()} cores; exit {first[0]}: {first[2].strip()[:120]}")
    print(table(["--jobs", "min wall s", "median wall s", "min / first's min"],
                [[j, f"{min(walls[j]):.2f}", f"{median(walls[j]):.2f}", f"{min(walls[j]) / min(walls[jobs[0]]):.2f}"]
                 for j in jobs]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
