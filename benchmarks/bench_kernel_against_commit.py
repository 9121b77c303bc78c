"""Every iteration of corpus kernels (issue 26), this tree against an earlier commit's reader, in one run.

    python -m benchmarks.bench_kernel_against_commit --commit a530269^ [--only _ws_] [--repeat 2]

For each kernel of tests/fixtures/ptx/corpus whose file name contains --only and whose manifest records
a problem (its parameters and grid): solver.kernel.analysis.analyse with that launch (every iteration of
every loop, every warp of CTA 0, the any-launch sets where the run leaves a descriptor unknown), the best
of --repeat runs, once with --commit's solver/ and spec/ (exported with `git archive` into a temporary
folder and imported in a subprocess) and once with this tree's. Read the ratios: the machine is shared.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from benchmarks.common import against_commit

ROOT = Path(__file__).resolve().parent.parent

_TIMER = """
import json, lzma, sys, time
sys.path.insert(0, sys.argv[1]); sys.path.insert(1, sys.argv[2])
from benchmarks.bench_kernel_reader import _kernels
from solver.kernel import analysis
from solver.kernel.concrete import executor
import solver
assert solver.__file__.startswith(sys.argv[1]), solver.__file__
found = {}
for folder, entry in _kernels(sys.argv[3]):
    if not entry.get("params"):
        continue
    text = lzma.open(folder / entry["file"], "rt").read()
    grid = (entry.get("problem") or {}).get("grid")
    launch = executor.Launch(params=dict(entry["params"]), grid=tuple(grid) if grid else None)
    times = []
    for _ in range(int(sys.argv[4])):
        began = time.perf_counter()
        analysis.analyse(text, launch=launch)
        times.append(time.perf_counter() - began)
    found[folder.name + "/" + entry["file"]] = min(times)
print(json.dumps(found))
"""


def _times(code_root: Path, only: str, repeat: int) -> dict:
    out = subprocess.run([sys.executable, "-c", _TIMER, str(code_root), str(ROOT), only, str(repeat)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--commit", required=True)
    parser.add_argument("--only", default="")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args(argv)
    before, after = against_commit(args.commit, lambda root: _times(root, args.only, args.repeat),
                                   "bench_kernel_against_commit")
    print(f"{'kernel':70s} {'before s':>9s} {'now s':>7s} {'ratio':>6s}")
    for name, seconds in before.items():
        print(f"{name[:70]:70s} {seconds:9.2f} {after[name]:7.2f} {after[name] / seconds:6.2f}")
    print(f"{'all':70s} {sum(before.values()):9.2f} {sum(after.values()):7.2f} "
          f"{sum(after.values()) / sum(before.values()):6.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
