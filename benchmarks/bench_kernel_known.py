"""The kernel reader's reach (issue 26): how many operand descriptors it knows with no parameter.

    python -m benchmarks.bench_kernel_known [--json FILE]

For each kernel of tests/fixtures/ptx/corpus and tests/fixtures/ptx/heldout, analysed with no parameter
(what a user gets first): how many operand descriptors of its MMA sites are known (no unknown bit at any
iteration evaluated: the run's, the any-launch sets', or the first iteration's), and, for the others,
the reason the any-launch sets give.
"""
from __future__ import annotations

import argparse
import collections
import json
import lzma
from pathlib import Path

from benchmarks.common import print_and_save
from solver.cli.ptx import descriptors_document
from solver.kernel import analysis

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "ptx"


def _kernels() -> list:
    """(set, compiler, file name, its text, its manifest entry) of every corpus and held-out kernel."""
    found = []
    for manifest in sorted((FIXTURES / "corpus").glob("*/manifest.json")):
        for entry in json.loads(manifest.read_text())["kernels"]:
            found.append(("corpus", manifest.parent.name, entry["file"], manifest.parent / entry["file"], entry))
    held_out = FIXTURES / "heldout"
    for entry in json.loads((held_out / "manifest.json").read_text())["kernels"]:
        found.append(("heldout", entry["compiler"], entry["file"], held_out / entry["file"], entry))
    return found


def _known(text: str) -> tuple:
    document = descriptors_document(analysis.analyse(text), with_addresses=False)
    known, reasons = 0, collections.Counter()
    for site in document["sites"]:
        for role, operand in site["operands"].items():
            if operand["source"] != "descriptor":
                continue
            if operand["known"]:
                known += 1
                continue
            sets = ((site["iterations"] or {}).get("any_launch") or {}).get(role) or {}
            reasons[(sets.get("unknown") or "no any-launch set")[:100]] += 1
    return known, sum(reasons.values()), reasons


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    rows, totals = [], collections.Counter()
    for which, compiler, name, path, _ in _kernels():
        text = lzma.open(path, "rt").read()
        known, unknown, reasons = _known(text)
        row = {"set": which, "compiler": compiler, "kernel": name, "known": known, "unknown": unknown,
               "reasons": dict(reasons)}
        rows.append(row)
        totals[f"{which} known"] += known
        totals[f"{which} unknown"] += unknown
        print(f"{which:8s} {name[:64]:64s} {known:4d} known {unknown:3d} unknown", flush=True)
    summary = {which: {"known": totals[f"{which} known"], "unknown": totals[f"{which} unknown"],
                       "rate": totals[f"{which} known"] / max(1, totals[f"{which} known"] + totals[f"{which} unknown"])}
               for which in ("corpus", "heldout")}
    print_and_save(rows, summary, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
