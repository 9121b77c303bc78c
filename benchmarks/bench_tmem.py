"""Latency of `layoutproof tmem map` and `layoutproof tmem plan`.

    python -m benchmarks.bench_tmem [--repeat R]

map: for each shape (and .pack::16b) at its largest .num, R timed runs of the whole command in-process
with --json (argument parsing, spec.tmem.ld_st.fragment_map, the JSON document; output to a buffer),
median and maximum; the baseline, in the same process, is the fragment map alone, computed afresh
(spec.tmem.ld_st caches each form's map, so the command itself finds it cached after the warm-up).
plan: for accumulators up to 128 x 512, the whole command in-process, text and --json, median and maximum
of R runs after one warm-up (the first run, fragment maps not yet cached, is also shown); the baseline is
D's map alone (spec.tmem.accumulator.d_locations). The issue's aim is an answer in under 100 ms.
"""
from __future__ import annotations

import argparse
import contextlib
import io

from benchmarks.common import median, run_times, table
from solver.cli.main import main
from spec.tmem import accumulator, ld_st


def _argv(shape: str, num: int, pack: bool) -> list:
    argv = ["tmem", "map", "--op", "ld", "--shape", shape, "--num", f"x{num}", "--json"]
    if pack:
        argv.append("--pack")
    if shape == "16x32bx2":
        argv += ["--half-splitoff", str(num * (2 if pack else 1))]
    return argv


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
            whole = run_times(command, repeat)
            # the map computed afresh (fragment_map caches each form; its cache is what the command sees)
            alone = run_times(lambda: ld_st._fragment_map.__wrapped__(shape, num, pack, split), repeat)
            rows.append([shape, f"x{num}", "pack" if pack else "-", f"{median(whole) * 1000:.1f}",
                         f"{max(whole) * 1000:.1f}", f"{median(alone) * 1000:.1f}"])
    return table(["shape", "num", "pack", "tmem map ms (median)", "ms (max)", "fragment_map alone ms"], rows)


PLANS = [(128, 64, "f32", 1), (128, 256, "f32", 1), (128, 256, "f16", 1), (64, 256, "f32", 1),
         (256, 256, "f32", 2), (128, 512, "f32", 1)]


def run_plans(repeat: int) -> str:
    rows = []
    for M, N, dtype, cta_group in PLANS:
        argv = ["tmem", "plan", "--m", str(M), "--n", str(N), "--dtype", dtype, "--cta-group", str(cta_group)]
        for extra in ([], ["--json"]):
            def command():
                with contextlib.redirect_stdout(io.StringIO()):
                    main(argv + extra)
            first = run_times(command, 1)
            whole = run_times(command, repeat)
            alone = run_times(lambda: accumulator.d_locations(M, N, cta_group), repeat)
            rows.append([f"{M} x {N} {dtype}" + (" ::2" if cta_group == 2 else ""), "json" if extra else "text",
                         f"{first[0] * 1000:.1f}", f"{median(whole) * 1000:.1f}", f"{max(whole) * 1000:.1f}",
                         f"{median(alone) * 1000:.1f}"])
    return table(["accumulator", "output", "first ms", "ms (median)", "ms (max)", "d_locations alone ms"], rows)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=20)
    repeat = parser.parse_args().repeat
    with contextlib.redirect_stdout(io.StringIO()):
        main(["tmem", "plan", "--m", "64", "--n", "8", "--dtype", "f32"])      # imports, not timed
    print(run(repeat))
    print()
    print(run_plans(repeat))
