"""Latency of `layoutproof scales plan` and of the scale properties of `prove`.

    python -m benchmarks.bench_scales [--repeat R]

plan: a grid of tiles (each kind and scale vector; N 8..256; K from one chunk to 1024; .cta_group::1, and 2
with M = 256; plus requests with no plan: a linear writer, K past the tensor memory), the whole command
in-process with --json (argument parsing, the search, the specification's check of the plan, the JSON
document; output to a buffer), median and maximum of R runs after one warm-up. The baseline in the same
run is the specification's check alone (solver.synth.scales_plan.verify on the plan found): the ratio says
what the search and the output add to it. The issue's aim is an answer in under 100 ms.
prove: each scale property proved or refuted once (solver.prove.prover.prove, in-process), and the
family's total. The issue's aim is under 5 s.
"""
from __future__ import annotations

import argparse
import contextlib
import io

from benchmarks.common import median, run_times, table
from solver.cli.main import main
from solver.synth import scales_plan as sp
from spec.scales import path


def _grid():
    for kind, block in (("mxf8f6f4", 32), ("mxf4", 32), ("mxf4nvf4", 32), ("mxf4nvf4", 16)):
        for n in (8, 128, 256):
            for k in (128, 512, 1024):
                yield ["--kind", kind, "--block", str(block), "--m", "128", "--n", str(n), "--k", str(k)]
        yield ["--kind", kind, "--block", str(block), "--m", "256", "--n", "256", "--k", "256", "--cta-group", "2"]
    yield ["--kind", "mxf4nvf4", "--block", "16", "--m", "128", "--n", "128", "--k", "256", "--sf-layout", "linear-k"]
    yield ["--kind", "mxf4nvf4", "--block", "16", "--m", "128", "--n", "256", "--k", "4096"]


def _command(argv):
    with contextlib.redirect_stdout(io.StringIO()):
        main(["scales", "plan", *argv, "--json"])


def _request(argv):
    options = dict(zip(argv[::2], argv[1::2]))
    return sp.make_request(options["--kind"], int(options["--m"]), int(options["--n"]), int(options["--k"]),
                           options.get("--sf-layout", "interleaved"), int(options["--block"]),
                           cta_group=int(options.get("--cta-group", 1)))


def bench_plan(repeat: int) -> str:
    rows = []
    for argv in _grid():
        _command(argv)                                   # warm-up: imports, the rule catalogue
        whole = run_times(lambda: _command(argv), repeat)
        found = sp.plan(_request(argv))
        readers = {name: path.standard_reader(o["rows"], o["k_blocks"], found.vector)
                   for name, o in found.operands.items()}
        check = run_times(lambda: sp.verify(found, readers), repeat) if found.found else None
        rows.append([" ".join(argv[1::2]), found.status, f"{median(whole) * 1e3:.1f}", f"{max(whole) * 1e3:.1f}",
                     f"{median(check) * 1e3:.1f}" if check else "-",
                     f"{median(whole) / median(check):.1f}x" if check else "-"])
    return table(["request (kind block m n k ...)", "status", "median ms", "max ms", "check alone ms",
                  "whole / check"], rows)


def bench_prove() -> str:
    from solver.prove.catalogue import all_properties
    from solver.prove.prover import forget_proofs, prove
    forget_proofs()
    rows, total = [], 0.0
    for p in all_properties():
        if p.family == "scales":
            result = prove(p)
            total += result.seconds
            rows.append([p.id, result.status, f"{result.seconds:.3f}"])
    rows.append(["(the family)", "", f"{total:.3f}"])
    return table(["property", "status", "seconds"], rows)


def run(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    print(bench_plan(args.repeat))
    print()
    print(bench_prove())


if __name__ == "__main__":
    run()
