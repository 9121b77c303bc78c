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
Ratios are taken within this run. Times are wall-clock on a shared machine: compare ratios, not
absolute times across runs.
"""
from __future__ import annotations

import argparse
import json
import time

from benchmarks.common import environment, fmt_ratio, fmt_s, median, table
from solver.prove import user_layout as ul

LAYOUT = "Sw<3,4,3> o (4096,4096):(4096,1)"


def _time(fn, repeat):
    samples, value = [], None
    for _ in range(repeat):
        began = time.perf_counter()
        value = fn()
        samples.append(time.perf_counter() - began)
    return value, median(samples)


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
    print(f"bijective: {LAYOUT}, bf16, 2^24 elements onto [0, 2^25); median of {args.repeat}")
    print(table(["engine", "ms", "vs gf2"], rows))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"layout": LAYOUT, "elements": 1 << 24, "gf2_s": t_gf2, "gf2_whole_s": t_whole,
                       "z3_s": t_z3, "enumeration_measured_log2": k, "enumeration_measured_s": t_small,
                       "enumeration_scaled_s": t_enum, "environment": environment()}, handle, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
