"""Helpers shared by the benchmarks: timing, medians, tables, number formats, machine facts."""
from __future__ import annotations

import gc
import os
import platform
import statistics
import subprocess
import sys
import time

import z3


def export_commit(commit: str, folder: str, paths=("solver", "spec", "layoutproof")) -> bool:
    """The packages of `commit`, exported into `folder` with `git archive` (to import an earlier version
    beside this one); False when git cannot."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        archive = subprocess.run(["git", "archive", commit, *paths], cwd=root, capture_output=True,
                                 check=True).stdout
        subprocess.run(["tar", "-x", "-C", folder], input=archive, check=True)
    except (subprocess.CalledProcessError, FileNotFoundError):
        return False
    return True


def against_commit(commit: str, measure, program: str) -> tuple:
    """(measure(the root of `commit`'s code), measure(this tree's root)): the commit's packages exported
    into a temporary folder (export_commit), measured first; SystemExit naming `program` where git cannot."""
    import tempfile
    from pathlib import Path
    with tempfile.TemporaryDirectory(prefix="old_code_") as folder:
        if not export_commit(commit, folder):
            raise SystemExit(f"{program}: git cannot export {commit!r}")
        before = measure(Path(folder))
    return before, measure(Path(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def median(xs):
    return statistics.median(xs)


def timed(fn, *args):
    gc.collect()
    began = time.perf_counter()
    value = fn(*args)
    return value, time.perf_counter() - began


def run_times(fn, repeat: int) -> list:
    """Seconds of each of `repeat` calls of fn()."""
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        fn()
        times.append(time.perf_counter() - began)
    return times


def table(headers, rows) -> str:
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(cells[0], widths)).rstrip(),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells[1:]]
    return "\n".join(lines)


def fmt_s(seconds: float) -> str:
    if seconds >= 100:
        return f"{seconds:.4g}"
    if seconds >= 1:
        return f"{seconds:.2f}"
    if seconds >= 0.01:
        return f"{seconds:.3f}"
    return f"{seconds:.4f}"


def fmt_ratio(r: float) -> str:
    return f"{r:,.0f}x" if r >= 10 else f"{r:.1f}x"


def human_duration(seconds: float) -> str:
    for unit, size in (("years", 365.25 * 86400), ("days", 86400), ("hours", 3600), ("minutes", 60)):
        if seconds >= size:
            return f"{seconds / size:,.1f} {unit}"
    return f"{seconds:.1f} s"


def environment() -> dict:
    try:
        nproc = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
    except OSError:
        nproc = "?"
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    return {"nproc": nproc, "os.cpu_count": os.cpu_count(), "sched_getaffinity": affinity,
            "python": sys.version.split()[0], "python_impl": platform.python_implementation(),
            "z3": z3.get_version_string(), "platform": platform.platform(),
            "processor": platform.processor() or platform.machine()}


# --- 1. the catalogue ------------------------------------------------------------------------------------


def print_and_save(rows: list, summary: dict, path) -> None:
    """The summary on stdout; rows and summary as JSON at `path` when one is given."""
    import json
    from pathlib import Path
    print(json.dumps(summary, indent=1))
    if path:
        Path(path).write_text(json.dumps({"rows": rows, "summary": summary}, indent=1))

