"""The kernel reader (issue 26): how long `ptx descriptors` takes on real kernels, against the reader it
replaced, in one run.

    python -m benchmarks.bench_kernel_reader [--old-commit 3e085d6] [--big-mb 20] [--json FILE]

For each kernel of tests/fixtures/ptx/corpus (or those whose file name contains --only):
* read: reading alone (solver.kernel.frontend.source.parse: the fast reader, falling back to the grammar);
* grammar: the reference reader alone (grammar.parse_with_grammar, ptx.lark through lark);
* new: solver.kernel.analysis.analyse with no parameters (what a user gets first);
* every iteration: the same with the manifest's parameters and grid (Triton's kernels: a 4096^3 problem,
  every iteration of every loop, every warp of CTA 0);
* old: the reader of --old-commit (solver/ptx, first iteration only), exported with `git archive` into a
  temporary folder and imported from there, on the same text.
Then a file of --big-mb MB made of corpus kernels (renamed apart) is read, then analysed whole (first
iteration and a run of every warp, any_launch="never"; and the default), new and old.
Times are the median of --repeat runs; read the ratios, not the seconds (the machine is shared and noisy).
"""
from __future__ import annotations

import argparse
import importlib
import json
import lzma
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import export_commit, print_and_save, run_times

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "fixtures" / "ptx" / "corpus"


def _median_seconds(function, repeat: int) -> float:
    return statistics.median(run_times(function, repeat))


def _old_reader(commit: str):
    """solver.ptx.analysis of that commit, imported from an exported copy (None if git cannot)."""
    folder = Path(tempfile.mkdtemp(prefix="old_reader_"))
    if not export_commit(commit, str(folder), ("solver", "spec")):
        return None
    code = ("import sys; sys.path.insert(0, %r); from solver.ptx import analysis; import json, time, lzma\n"
            "text = open(sys.argv[1]).read(); t = time.perf_counter(); analysis.analyse(text)\n"
            "print(json.dumps(time.perf_counter() - t))") % str(folder)
    return code


def _old_seconds(code: str, text: str, repeat: int) -> float:
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as handle:
        handle.write(text)
    times = []
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-c", code, handle.name], capture_output=True, text=True)
        times.append(json.loads(out.stdout) if out.returncode == 0 else float("nan"))
    return statistics.median(times)


def _kernels(only: str) -> list:
    found = []
    for manifest in sorted(CORPUS.glob("*/manifest.json")):
        for entry in json.loads(manifest.read_text())["kernels"]:
            if only in entry["file"]:
                found.append((manifest.parent, entry))
    return found


def _big_file(kernels: list, megabytes: int) -> str:
    """Corpus kernels one after another (their module directives dropped, each .entry renamed apart), to
    the size asked."""
    pieces, size, k = [".version 8.7\n.target sm_100a\n.address_size 64\n"], 0, 0
    while size < megabytes << 20:
        folder, entry = kernels[k % len(kernels)]
        text = lzma.open(folder / entry["file"], "rt").read()
        text = re.sub(r"^\s*\.(version|target|address_size)\b[^\n]*", "", text, flags=re.M)
        text = re.sub(r"\.entry\s+", f".entry k{k}_", text)
        pieces.append(text)
        size += len(text)
        k += 1
    return "\n".join(pieces)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--old-commit", default="3e085d6")
    parser.add_argument("--only", default="")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--big-mb", type=int, default=20)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    source = importlib.import_module("solver.kernel.frontend.source")
    grammar = importlib.import_module("solver.kernel.frontend.grammar")
    analysis = importlib.import_module("solver.kernel.analysis")
    executor = importlib.import_module("solver.kernel.concrete.executor")
    old = _old_reader(args.old_commit)
    rows = []
    kernels = _kernels(args.only)
    for folder, entry in kernels:
        text = lzma.open(folder / entry["file"], "rt").read()
        grid = (entry.get("problem") or {}).get("grid")
        launch = executor.Launch(params=dict(entry.get("params") or {}), grid=tuple(grid) if grid else None)
        row = {"kernel": f"{folder.name}/{entry['file']}", "kb": round(len(text) / 1024),
               "read": _median_seconds(lambda: source.parse(text), args.repeat),
               "grammar": _median_seconds(lambda: grammar.parse_with_grammar(text), args.repeat),
               "new": _median_seconds(lambda: analysis.analyse(text), args.repeat),
               "every_iteration": _median_seconds(lambda: analysis.analyse(text, launch=launch), args.repeat)
               if entry.get("params") else None,
               "old": _old_seconds(old, text, args.repeat) if old else None}
        rows.append(row)
        print(f"{row['kernel'][:70]:70s} {row['kb']:4d} KB  read {row['read']:.3f}s  grammar {row['grammar']:.3f}s  "
              f"new {row['new']:.3f}s"
              + (f"  every iteration {row['every_iteration']:.3f}s" if row["every_iteration"] else "")
              + (f"  old {row['old']:.3f}s" if row["old"] is not None else ""), flush=True)
    big = _big_file(kernels, args.big_mb)
    big_times = {}
    for name, work in (("read", lambda: source.parse(big)),
                       ("first_iteration_and_runs", lambda: analysis.analyse(big, any_launch="never")),
                       ("default", lambda: analysis.analyse(big))):
        started = time.perf_counter()
        try:
            work()
            big_times[name] = time.perf_counter() - started
        except Exception as error:              # a refusal (a limit) is a result too
            big_times[name] = f"{type(error).__name__}: {error}"
    big_old = _old_seconds(old, big, 1) if old else None
    summary = {"kernels": len(rows), "big_file_mb": round(len(big) / (1 << 20), 1), "big_seconds": big_times,
               "big_old_seconds": big_old,
               "read_mb_per_s": sum(r["kb"] for r in rows) / 1024 / sum(r["read"] for r in rows),
               "grammar_mb_per_s": sum(r["kb"] for r in rows) / 1024 / sum(r["grammar"] for r in rows),
               "median_new_over_old": statistics.median(r["new"] / r["old"] for r in rows if r["old"]) if old else None,
               "slowest_every_iteration": max((r["every_iteration"] for r in rows if r["every_iteration"]), default=None),
               "over_half_a_second": [r["kernel"] for r in rows if (r["every_iteration"] or r["new"]) > 0.5]}
    print_and_save(rows, summary, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
