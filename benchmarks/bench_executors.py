"""Wall time of the commands whose work is per element: `recipe` 256x256, `im2col --json` 1024 pixels x 64
channels, `desc addresses` of 64K elements; and each fast path against spec's reference.

    python -m benchmarks.bench_executors [--repeat R]

commands: the whole command, `python -m layoutproof ...` in a fresh process with stdout to /dev/null
(start-up included, bytecode cached by one untimed run first), minimum of R runs. start-up: the same for
`desc decode` (the least work a command does) and for `python -c pass`. work: in a fresh process, after
`solver.cli.main` is imported, one call of main(argv) with stdout to a buffer (the command's own lazy
imports included: recipe 256x256 imports no z3, synth's direct path answering every K step), minimum
over R processes; and a second call in the same process (imports done; nothing of synth's is kept
between calls). The recipe again with LAYOUTPROOF_SYNTH_DIRECT=0 (every K step by Z3's search, z3
imported): the same output, for comparison. The issue's aims: recipe under 200 ms, im2col under 100 ms,
desc addresses under 20 ms of work.

paths: in-process, minimum of R runs, the reference (per element) and the fast path (a row at a time)
on the same input: the recipe proof (spec.cases.recipe_case.first_misread_by_element / first_misread),
synth's targets over the 16 K steps of the
recipe (targets_reference / targets inside synth.shared_work(), as recipe.build calls it), synth over
those 16 K steps (Z3's search / the direct path; tests/solver_tests/synth/test_recipe_direct.py checks the two equal), im2col
placement as JSON-able dicts (placement + as_json / placement_json) and as text (json.dumps of it /
solver.cli.render.im2col_placement_text), TMA box placement (place / place_rows). tests/spec_tests/fast/test_fast_paths.py
checks each pair equal.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

from benchmarks.common import run_times, table

RECIPE = ("recipe --arch sm90 --dtype bf16 --major K --mn 256 --k-tile 256 --swizzle 128B "
          "--smem-address 0x400").split()
IM2COL = ("im2col --mode im2col --tensor 64,32,32,1 --lower=0,0 --upper=0,0 --channels-per-pixel 64 "
          "--pixels-per-column 1024 --coords 0,0,0,0 --elem-bytes 2 --swizzle 128B --smem-address 0x400 "
          "--json").split()
ADDRESSES = ("desc addresses --arch sm90 0x4000004000010040 --dtype bf16 --major K --mn 256 --k 256 "
             "--json").split()
DECODE = "desc decode --arch sm90 0x4000004000010040".split()

COMMANDS = [("recipe 256x256 (text)", RECIPE, 200),
            ("recipe 256x256, LAYOUTPROOF_SYNTH_DIRECT=0", RECIPE, None), ("im2col 1024 px x 64 ch --json", IM2COL, 100),
            ("desc addresses 256x256 --json", ADDRESSES, None), ("desc decode (start-up)", DECODE, None)]

_WORK = """
import contextlib, io, sys, time
from solver.cli.main import main
argv = sys.argv[1:]
spent = []
for _ in range(2):
    with contextlib.redirect_stdout(io.StringIO()):
        began = time.perf_counter()
        try:
            main(argv)
        except SystemExit:
            pass
        spent.append(time.perf_counter() - began)
print(*spent)
"""


def _environment(name: str) -> dict:
    """The environment a command row runs in: its name may set LAYOUTPROOF_SYNTH_DIRECT=0."""
    return dict(os.environ, LAYOUTPROOF_SYNTH_DIRECT="0" if "LAYOUTPROOF_SYNTH_DIRECT=0" in name else "1")


def _wall(argv, repeat: int, env=None) -> float:
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)     # bytecode cached
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        times.append(time.perf_counter() - began)
    return min(times)


def _work(argv, repeat: int, env=None) -> tuple:
    """(first call, second call) of main(argv) in one fresh process, each the minimum over `repeat`."""
    runs = [tuple(map(float, subprocess.run([sys.executable, "-c", _WORK, *argv], capture_output=True,
                                            text=True, env=env).stdout.split())) for _ in range(repeat)]
    return min(first for first, _ in runs), min(second for _, second in runs)


def run_commands(repeat: int) -> str:
    rows = [("python -c pass", f"{_wall([sys.executable, '-c', 'pass'], repeat) * 1000:.0f}", "-", "-", "-")]
    for name, argv, aim in COMMANDS:
        env = _environment(name)
        wall = _wall([sys.executable, "-m", "layoutproof", *argv], repeat, env)
        first, second = _work(argv, repeat, env)
        rows.append((name, f"{wall * 1000:.0f}", f"{first * 1000:.1f}", f"{second * 1000:.1f}",
                     f"< {aim}" if aim else "-"))
    return table(["command", "wall ms (min)", "work ms, 1st call", "work ms, 2nd call", "aim ms (wall)"], rows)


def _shared(tiles) -> list:
    """The targets of every K step, as recipe.build asks for them (inside synth.shared_work())."""
    from solver.synth import descriptor as synth
    with synth.shared_work():
        return [t.targets() for t in tiles]


def _synthesized(tiles, direct: bool) -> list:
    """synthesize for every K step, as recipe.build asks (inside synth.shared_work()), by one path."""
    from solver.synth import descriptor as synth
    with synth.shared_work():
        return [synth.synthesize(t, direct=direct) for t in tiles]


def run_paths(repeat: int) -> str:
    from spec.cases import recipe_case
    from spec.tma import im2col, place
    from solver.cli import render
    from solver.synth import descriptor as synth
    from solver.synth import recipe

    r = recipe.build("sm90", "bf16", "K", 256, 256, "128B", 0x400)
    case = recipe_case.parse_case(recipe.case_document(r), r.arch)
    k_inst = 16
    tiles = [synth.Tile("sm90", "bf16", "K", 256, k_inst, k0, r.layout, 0x400, r.kind) for k0 in range(0, 256, k_inst)]
    load = im2col.make_load("im2col", (64, 32, 32, 1), (0, 0), (0, 0), 64, 1024, (0, 0, 0, 0), elem_bytes=2,
                            swizzle="128B", smem_address=0x400)
    fill = im2col.fill_value(load)
    box = place.make_box("128B", 2, (64, 256), 0x400)
    pairs = [
        ("recipe proof 256x256", lambda: recipe_case.first_misread_by_element(case),
         lambda: recipe_case.first_misread(case)),
        ("synth targets, 16 K steps", lambda: [t.targets_reference() for t in tiles], lambda: _shared(tiles)),
        ("synth, 16 K steps: Z3 / direct", lambda: _synthesized(tiles, False), lambda: _synthesized(tiles, True)),
        ("im2col placement dicts", lambda: [e.as_json(fill) for e in im2col.placement(load)],
         lambda: im2col.placement_json(load)),
        ("im2col placement JSON text", lambda: json.dumps([e.as_json(fill) for e in im2col.placement(load)]),
         lambda: render.im2col_placement_text(load)),
        ("TMA box 64x256 placement", lambda: place.place(box), lambda: place.place_rows(box)),
    ]
    rows = []
    for name, reference, fast in pairs:
        slow, quick = min(run_times(reference, repeat)), min(run_times(fast, repeat))
        rows.append((name, f"{slow * 1000:.1f}", f"{quick * 1000:.1f}", f"{slow / quick:.1f}x"))
    return table(["path", "reference ms", "fast ms", "speed-up"], rows)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    repeat = parser.parse_args().repeat
    print(run_commands(repeat))
    print()
    print(run_paths(repeat))
