"""A file of many kernels, read and evaluated in 1, 2, ... forked processes (`ptx descriptors --jobs N`,
issue 26's 20 MB aim), in one run.

    python -m benchmarks.bench_kernel_jobs [--big-mb 20] [--jobs 1,2,4,8,16] [--json FILE]

The file is bench_kernel_reader's: corpus kernels one after another, each .entry renamed apart, to the
size asked. For each --jobs value, solver.kernel.analysis.analyse(text, jobs=N) with the defaults of
`ptx descriptors` (no parameter: the first iteration, a run of every warp, the any-launch sets where the
run leaves a descriptor unknown), once; the reading alone (source.parse) is timed too, and every run's
descriptors document is checked to be the one-process document. Each run also shows the first process's
own parts (_timed_parts: with N > 1 it reads only the module's structure, the workers the functions).
Read the ratios to the one-process time: the processes share the machine's cores.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import time

from benchmarks.bench_kernel_reader import _big_file, _kernels
from solver.cli.ptx import descriptors_document
from solver.kernel import analysis
from solver.kernel.frontend import source


def _timed_parts() -> dict:
    """Wrap the first process's parts of analyse(jobs=N) (the module's structure read before the workers
    start; the site opcodes found while they run; the other sites and the unread listing after them):
    {part: seconds}, added to at each call."""
    parts: dict = {}

    def wrap(module, name: str) -> None:
        function = getattr(module, name)

        def timed(*args, **kwargs):
            began = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                parts[name] = parts.get(name, 0.0) + time.perf_counter() - began
        setattr(module, name, timed)
    wrap(source, "parse_apart")
    for name in ("site_occurrences", "other_sites", "unread_statements"):
        wrap(analysis, name)
    return parts


def _digest(result) -> str:
    text = json.dumps(descriptors_document(result), sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--big-mb", type=int, default=20)
    parser.add_argument("--jobs", default="1,2")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    counts = [int(j) for j in args.jobs.split(",")]
    big = _big_file(_kernels(""), args.big_mb)
    started = time.perf_counter()
    module = source.parse(big)
    read_seconds = time.perf_counter() - started
    print(f"{len(big) / (1 << 20):.1f} MB, {len(module.functions)} functions, {os.cpu_count()} cores; "
          f"reading {read_seconds:.1f} s", flush=True)
    rows, first = [], None
    parts = _timed_parts()
    for jobs in counts:
        parts.clear()
        started = time.perf_counter()
        result = analysis.analyse(big, jobs=jobs)
        seconds = time.perf_counter() - started
        digest = _digest(result)
        first = first or (seconds, digest)
        shown = {name: round(value, 2) for name, value in parts.items()}
        rows.append({"jobs": jobs, "seconds": round(seconds, 2), "ratio_to_first": round(seconds / first[0], 3),
                     "same_document": digest == first[1], "first_process_parts": shown})
        print(f"jobs {jobs:3d}: {seconds:7.1f} s  ({seconds / first[0]:.2f} of jobs {counts[0]})  "
              f"same document: {digest == first[1]}  first process: {shown}", flush=True)
    summary = {"megabytes": round(len(big) / (1 << 20), 1), "functions": len(module.functions),
               "cores": os.cpu_count(), "read_seconds": round(read_seconds, 2), "runs": rows}
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(summary, handle, indent=1)
    return 0 if all(row["same_document"] for row in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
