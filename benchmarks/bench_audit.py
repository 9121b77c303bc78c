"""`layoutproof audit` on the corpus (issue 27): how long each original takes at its recorded problem, whether
it is proved (a refutation of an original is a false alarm), and how many of its injected bugs
(solver.kernel.audit.mutate) are refuted, in one run.

    python -m benchmarks.bench_audit [--set corpus|heldout] [--only TEXT] [--json FILE]

For each kernel of tests/fixtures/ptx/corpus/audit.json (--set heldout: tests/fixtures/ptx/heldout/audit.json,
kernels the audit was not developed on), or those whose file contains --only: the original
is audited; when every property is proved, each of its mutants is too. A mutant that survives (nothing
refuted) is `unexercised` when the audited CTA never executes the statement it changes (causal attention's
CTA 0 skips the blocks above the diagonal), `equivalent` when spec reads every descriptor value the run fed
that MMA the same with the mutant's change (an LBO a swizzled K-major operand ignores), else `missed`.
detection = refuted / (mutants - unexercised - equivalent).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import lzma
import os
import time
from collections import Counter

import layoutproof as lp
from benchmarks.common import print_and_save, table as text_table
from solver.kernel import analysis as kernel_analysis
from solver.kernel import mma
from solver.kernel.audit import mutate, operations
from solver.kernel.symbolic import bits
from solver.kernel.concrete.executor import Launch
from spec.mma import readmap
from spec.rule import SpecError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SETS = {name: os.path.join(ROOT, "tests", "fixtures", "ptx", name) for name in ("corpus", "heldout")}


def _audit(entry: dict, text: str, maps: dict):
    return lp.audit(text, maps, entry["params"], grid=entry["grid"], kernel=entry["kernel"])


def _statuses(report) -> dict:
    return {p.id: p.status for k in report.kernels for p in k.properties}


def _reached(text: str, entry: dict) -> set:
    """The lines of the MMA, TMA and mbarrier statements the original's run executes (in the audited CTA)."""
    launch = Launch(params=dict(entry["params"]), grid=tuple(entry["grid"]))
    result = kernel_analysis.analyse(text, kernel=entry["kernel"], params=entry["params"], launch=launch,
                                     any_launch="never", record=operations.is_recorded)
    return {visit.line for run in result.runs.values() if not isinstance(run, str) for visit in run.visits}


def _equivalent(text: str, entry: dict, mutant: mutate.Mutant) -> bool:
    """Whether spec reads every value the original run fed the mutated descriptor the same after the change."""
    if mutant.kind not in mutate.DESCRIPTOR_DELTAS:
        return False
    launch = Launch(params=dict(entry["params"]), grid=tuple(entry["grid"]))
    result = kernel_analysis.analyse(text, kernel=entry["kernel"], params=entry["params"], launch=launch,
                                     any_launch="never")
    site = next((s for s in result.sites if s.line == mutant.line), None)
    found = result.iterations.get((site.function, site.line)) if site else None
    role = mutant.name.split()[1].lower()
    if site is None or found is None:
        return False
    for visit in found.visits:
        now = mma.at_visit(site, visit.values)
        op = now.operands[role]
        if mma.missing_read_map(now, op) is not None:
            return False
        changed = dataclasses.replace(op, word=bits.const((op.word.value + mutate.DESCRIPTOR_DELTAS[mutant.kind])
                                                          % (1 << 64), 64))
        try:
            if readmap.read_addresses(mma.make_operand(now, op)) != readmap.read_addresses(mma.make_operand(now, changed)):
                return False
        except SpecError:
            return False
    return True


def run(only: str, folder: str = SETS["corpus"]) -> tuple:
    entries = json.load(open(os.path.join(folder, "audit.json")))["kernels"]
    rows, totals = [], Counter()
    for entry in entries:
        if only not in entry["file"]:
            continue
        text = lzma.open(os.path.join(folder, entry["file"]), "rt").read()
        began = time.perf_counter()
        report = _audit(entry, text, entry["tensormaps"])
        seconds = time.perf_counter() - began
        statuses = _statuses(report)
        refuted = sorted(p for p, s in statuses.items() if s == "refuted")
        totals["originals"] += 1
        totals["false_alarms"] += bool(refuted)
        totals["proved"] += report.ok
        row = {"kernel": entry["file"], "seconds": round(seconds, 2), "proved": report.ok,
               "original_refuted": refuted, "mutants": 0, "refuted": 0, "equivalent": 0, "unexercised": 0,
               "missed": [],
               "by_property": {}}
        if report.ok:
            by_property = Counter()
            reached = _reached(text, entry)
            for mutant in mutate.mutants(text, entry["tensormaps"], entry["kernel"]):
                found = _statuses(_audit(entry, mutant.text, mutant.tensormaps))
                broken = [p for p, s in found.items() if s == "refuted"]
                row["mutants"] += 1
                if broken:
                    row["refuted"] += 1
                    by_property[broken[0]] += 1
                elif mutant.line is not None and mutant.line not in reached:
                    row["unexercised"] += 1
                elif _equivalent(text, entry, mutant):
                    row["equivalent"] += 1
                else:
                    row["missed"].append(mutant.name)
            row["by_property"] = dict(by_property)
            for key in ("mutants", "refuted", "equivalent", "unexercised"):
                totals[key] += row[key]
            totals["missed"] += len(row["missed"])
        rows.append(row)
    considered = totals["mutants"] - totals["equivalent"] - totals["unexercised"]
    summary = {**totals, "detection": round(totals["refuted"] / considered, 4) if considered else None,
               "false_alarm_rate": round(totals["false_alarms"] / totals["originals"], 4) if totals["originals"]
               else None}
    return rows, summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--set", default="corpus", choices=sorted(SETS))
    parser.add_argument("--only", default="")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    rows, summary = run(args.only, SETS[args.set])
    table = [{"kernel": r["kernel"].split("/")[-1].replace(".ptx.xz", ""), "s": r["seconds"],
              "proved": r["proved"], "mutants": r["mutants"], "refuted": r["refuted"],
              "equivalent": r["equivalent"], "unexercised": r["unexercised"], "missed": len(r["missed"])}
             for r in rows]
    print(text_table(list(table[0]), [list(r.values()) for r in table]) if table else "no kernel")
    print_and_save(table, summary, args.json)
    if args.json:
        with open(args.json) as handle:
            saved = json.load(handle)
        saved["details"] = rows
        with open(args.json, "w") as handle:
            json.dump(saved, handle, indent=1)


if __name__ == "__main__":
    main()
