"""Bijectivity of a 2^24-element swizzled layout: the GF(2) engine against Z3 and spec's enumeration,
in one run (issue 16).

    python -m benchmarks.bench_gf2 [--repeat N] [--enumerate-log2 K] [--json FILE]

The layout: Sw<3,4,3> o (4096,4096):(4096,1) in bf16 at start 0 (2^24 elements, 32 MiB), property
`bijective` onto [0, 2^25) (every 2-byte slot used once). Measured, each the median of --repeat runs:
  gf2          solver.prove.user_layout.decide_gf2 on the prepared subject (rank, kernel, extremes);
  gf2 (whole)  the same plus parsing the text and building the bit matrix (make_subject);
  z3           solver.prove.user_layout.decide_z3 (two queries: injective, then inside the range);
  enumeration  spec's evaluation of every index and a set of the addresses, MEASURED on the layout
               Sw<3,4,3> o (2^a,2^b):(2^b,1) of 2^K elements (default K=16) and SCALED linearly to 2^24
               (one evaluation per index); the scaled figure is marked as such.
  tensor-layouts  (optional) tensor_layouts.analysis.is_bijective (it enumerates the image) on the same
               layout in element offsets, Sw<3,3,3> o (2^a,2^b):(2^b,1) (the bf16 byte swizzle Sw<3,4,3>
               moved down one bit), 2^K elements MEASURED and SCALED to 2^24 like the enumeration; run by
               the Python of $TENSOR_LAYOUTS_PYTHON, else /work/venvs/tl/bin/python, else this one; the
               row is skipped with a note when tensor-layouts is not installed there.
Ratios are taken within this run. Times are wall-clock on a shared machine: compare ratios, not
absolute times across runs.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

from benchmarks.common import environment, fmt_ratio, fmt_s, median, table
from solver.prove import user_layout as ul

LAYOUT = "Sw<3,4,3> o (4096,4096):(4096,1)"
TENSOR_LAYOUTS_VENV = "/work/venvs/tl/bin/python"
_TL_CODE = """
import json, sys, time
from tensor_layouts import ComposedLayout, Layout, Swizzle
from tensor_layouts.analysis import is_bijective
k, repeat = int(sys.argv[1]), int(sys.argv[2])
layout = ComposedLayout(Swizzle(3, 3, 3), Layout((1 << (k - k // 2), 1 << (k // 2)), (1 << (k // 2), 1)), offset=0)
samples = []
for _ in range(repeat):
    began = time.perf_counter()
    value = is_bijective(layout)
    samples.append(time.perf_counter() - began)
import tensor_layouts
print(json.dumps({"value": value, "s": sorted(samples)[len(samples) // 2],
                  "version": getattr(tensor_layouts, "__version__", "?")}))
"""


def _tensor_layouts(k: int, repeat: int):
    """(seconds, version) of tensor-layouts' is_bijective on the 2^k layout, or (None, why)."""
    python = os.environ.get("TENSOR_LAYOUTS_PYTHON") or (
        TENSOR_LAYOUTS_VENV if os.path.exists(TENSOR_LAYOUTS_VENV) else sys.executable)
    try:
        done = subprocess.run([python, "-c", _TL_CODE, str(k), str(repeat)], capture_output=True, text=True,
                              timeout=600)
    except (OSError, subprocess.TimeoutExpired) as error:
        return None, f"tensor-layouts not run ({error})"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["?"])[-1]
        return None, f"tensor-layouts not installed for {python} ({last}): row skipped"
    answer = json.loads(done.stdout)
    if answer["value"] is not True:
        return None, f"tensor-layouts says is_bijective = {answer['value']}: row skipped"
    return answer["s"], answer["version"]


def _time(fn, repeat):
    samples, value = [], None
    for _ in range(repeat):
        began = time.perf_counter()
        value = fn()
        samples.append(time.perf_counter() - began)
    return value, median(samples)


SYMBOLIC = ["prove", "--layout", "(128,128):(S,1)", "--dtype", "bf16", "--param", "S=128..4096:128", "injective"]


def _symbolic_wall(repeat: int) -> dict:
    """Best-of-`repeat` wall seconds of whole `python -m layoutproof` processes: start-up alone
    (--version), the symbolic-stride proof as `auto` answers it (the mixed-radix criterion at each
    value) and as one Z3 query (--engine z3). Bytecode is written (a user's installed wheel has it), so
    one warm-up run of each comes first."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    commands = {"--version": ["--version"], "symbolic stride, auto (radix)": SYMBOLIC,
                "symbolic stride, --engine z3": SYMBOLIC + ["--engine", "z3"]}
    best = {}
    for name, argv in commands.items():
        command = [sys.executable, "-m", "layoutproof"] + argv
        subprocess.run(command, env=env, capture_output=True, check=True)
        samples = []
        for _ in range(repeat):
            began = time.perf_counter()
            subprocess.run(command, env=env, capture_output=True, check=True)
            samples.append(time.perf_counter() - began)
        best[name] = min(samples)
    return best


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--enumerate-log2", type=int, default=16)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)

    subject = ul.make_subject(LAYOUT, "bf16", 0)
    question = ul.resolve(subject, "bijective")
    assert subject.size == 1 << 24 and (question.lo, question.hi) == (0, 1 << 25)
    gf2, t_gf2 = _time(lambda: ul.decide_gf2(subject, question), args.repeat)
    _, t_whole = _time(lambda: ul.decide_gf2(*(lambda s: (s, ul.resolve(s, "bijective")))(
        ul.make_subject(LAYOUT, "bf16", 0))), args.repeat)
    z3v, t_z3 = _time(lambda: ul.decide_z3(subject, question), args.repeat)
    assert gf2[0] == z3v[0] == "proved", (gf2, z3v)

    k = args.enumerate_log2
    small_text = f"Sw<3,4,3> o ({1 << (k - k // 2)},{1 << (k // 2)}):({1 << (k // 2)},1)"
    small = ul.make_subject(small_text, "bf16", 0)
    small_q = ul.resolve(small, "bijective")
    enum, t_small = _time(lambda: ul.decide_enumeration(small, small_q), max(1, min(args.repeat, 3)))
    assert enum[0] == "proved"
    t_enum = t_small * (1 << (24 - k))

    ms = lambda t: f"{t * 1e3:.3f}"
    rows = [["gf2 (decide)", ms(t_gf2), "1x"],
            ["gf2 (parse + matrix + decide)", ms(t_whole), fmt_ratio(t_whole / t_gf2)],
            ["z3", ms(t_z3), fmt_ratio(t_z3 / t_gf2)],
            [f"spec enumeration (2^{k} measured: {fmt_s(t_small)} s; scaled x{1 << (24 - k)})",
             ms(t_enum), fmt_ratio(t_enum / t_gf2)]]
    t_tl, tl_note = _tensor_layouts(k, max(1, min(args.repeat, 3)))
    if t_tl is not None:
        t_tl_scaled = t_tl * (1 << (24 - k))
        rows.append([f"tensor-layouts {tl_note} is_bijective (2^{k} measured: {fmt_s(t_tl)} s; scaled "
                     f"x{1 << (24 - k)})", ms(t_tl_scaled), fmt_ratio(t_tl_scaled / t_gf2)])
    print(f"bijective: {LAYOUT}, bf16, 2^24 elements onto [0, 2^25); median of {args.repeat}")
    print(table(["engine", "ms", "vs gf2"], rows))
    if t_tl is None:
        print(f"note: {tl_note}")
    symbolic = _symbolic_wall(max(3, min(args.repeat, 5)))
    print(f"\nprove --layout on a 128x128 tile with symbolic stride, wall time of `python -m layoutproof` "
          f"with start-up (best of {max(3, min(args.repeat, 5))}, bytecode cached after one warm-up run)")
    print(table(["command", "s", "vs --version"],
                [[name, f"{t:.3f}", fmt_ratio(t / symbolic['--version'])] for name, t in symbolic.items()]))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"layout": LAYOUT, "elements": 1 << 24, "gf2_s": t_gf2, "gf2_whole_s": t_whole,
                       "z3_s": t_z3, "enumeration_measured_log2": k, "enumeration_measured_s": t_small,
                       "enumeration_scaled_s": t_enum,
                       "tensor_layouts_measured_s": t_tl,
                       "tensor_layouts_scaled_s": t_tl * (1 << (24 - k)) if t_tl is not None else None,
                       "symbolic_wall_s": symbolic, "environment": environment()}, handle, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
