"""Latency of `layoutproof tmem map`: the fragment map of every tcgen05.ld/st shape at its largest .num.

    python -m benchmarks.bench_tmem [--repeat R]

For each shape (and .pack::16b), R timed runs of the whole command in-process with --json (argument
parsing, spec.tmem.ld_st.fragment_map, the JSON document; output to a buffer), median and maximum; the
baseline, in the same process, is the fragment map alone. The issue's aim is an answer in under 100 ms.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import time

from benchmarks.common import median, table
from solver.cli.main import main
from spec.tmem import ld_st


def _argv(shape: str, num: int, pack: bool) -> list:
    argv = ["tmem", "map", "--op", "ld", "--shape", shape, "--num", f"x{num}", "--json"]
    if pack:
        argv.append("--pack")
    if shape == "16x32bx2":
        argv += ["--half-splitoff", str(num * (2 if pack else 1))]
    return argv


def _seconds(fn, repeat: int) -> list:
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        fn()
        times.append(time.perf_counter() - began)
    return times


def run(repeat: int) -> str:
    rows = []
    for shape in ld_st.SHAPES:
        num = max(ld_st.legal_nums(shape))
        for pack in (False, True):
            def command():
                with contextlib.redirect_stdout(io.StringIO()):
                    main(_argv(shape, num, pack))
            split = num * (2 if pack else 1) if shape == "16x32bx2" else None
            command()                                             # warm-up: imports
            whole = _seconds(command, repeat)
            alone = _seconds(lambda: ld_st.fragment_map(shape, num, pack, split), repeat)
            rows.append([shape, f"x{num}", "pack" if pack else "-", f"{median(whole) * 1000:.1f}",
                         f"{max(whole) * 1000:.1f}", f"{median(alone) * 1000:.1f}"])
    return table(["shape", "num", "pack", "tmem map ms (median)", "ms (max)", "fragment_map alone ms"], rows)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=20)
    print(run(parser.parse_args().repeat))
