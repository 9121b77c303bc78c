"""Does ptxas agree with the desc fuzz target's labels? Records tests/hardware/desc_ptxas_agreement.json.

For each arch (sm90: wgmma.mma_async on sm_90a; sm100 / sm103: tcgen05.mma on sm_100a / sm_103a) this
generates what

    layoutproof fuzz --target desc --arch ARCH --valid --count VALID --seed 0 --format ptx
    layoutproof fuzz --target desc --arch ARCH --violate RULE --count PER_RULE --seed S --format ptx

writes (S = 1 + the rule's position in the target's rule list), for every desc rule that the arch can break
alone, and runs `ptxas -arch=<target>` twice over: on the run's module (all its kernels, the file the
command writes) and on each case's kernel alone (solver.fuzz.adapters.ptxas, the `--against` oracle).
A case agrees when ptxas refuses it exactly when its label's outcome is "refused" (solver/fuzz/outcome.py:
the rules whose instruction form ptxas refuses on that arch); every other case, valid or not, must
assemble: the descriptor words and the tcgen05 instruction descriptor are run-time values.

The file keeps, per run: the command, the counts (cases, labelled refused, refused by ptxas, agreeing),
ptxas's distinct first errors, the module's verdict, a sample of cases with their verdicts (replayed by
tests/hardware_replay/test_desc_ptxas_replay.py), and every disagreement with its case.

Usage (repository root): python3 hardware/run_desc_ptxas_agreement.py [--ptxas PATH] [--valid 300]
                         [--per-rule 30] [--out tests/hardware/desc_ptxas_agreement.json]
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from solver import provenance  # noqa: E402
from solver.fuzz import engine as fuzz  # noqa: E402
from solver.fuzz.adapters import ptxas as ptxas_adapter  # noqa: E402
from solver.fuzz.formats import ptx as fuzz_ptx  # noqa: E402
from solver.fuzz.outcome import refused_ids  # noqa: E402
from solver.model import desc_case as desc_model  # noqa: E402
from spec.rules import all_rules  # noqa: E402

DEFAULT_OUT = os.path.join("tests", "hardware", "desc_ptxas_agreement.json")
ARCHES = ("sm90", "sm100", "sm103")
SAMPLES = {True: 2, False: 1}          # sample cases kept per run: refused-labelled runs keep two


def ptxas_rules(arch: str) -> list:
    """The desc rules ptxas enforces on `arch`: the fuzz labels' (the rules ptxas refuses there,
    solver.fuzz.outcome.refused_ids) and the catalogue's (enforced_by ptxas, not listed in not_enforced_on)."""
    catalogue = {r.id for r in all_rules() if r.enforced_by == "ptxas" and arch not in r.not_enforced_on}
    labelled = refused_ids(desc_model.RULE_IDS, arch, "ptxas")
    return sorted((set(labelled) | catalogue) & set(desc_model.RULE_IDS))


def command(arch: str, violate, count: int, seed: int) -> str:
    which = f"--violate {violate}" if violate else "--valid"
    return f"layoutproof fuzz --target desc --arch {arch} {which} --count {count} --seed {seed} --format ptx"


def verdict(record: dict, ptxas: str) -> dict:
    target, text = fuzz_ptx.render_case(record)
    accepted, detail = ptxas_adapter.assemble(target, text, ptxas)
    return {"accepted": accepted, "first_error": "" if accepted else detail}


def module_verdict(records: list, ptxas: str) -> dict:
    modules = fuzz_ptx.render(records)
    assert len(modules) == 1, sorted(modules)
    (target, text), = modules.items()
    accepted, detail = ptxas_adapter.assemble(target, text, ptxas)
    return {"target": target, "kernels": len(records), "assembled": accepted,
            "first_error": "" if accepted else detail}


def slim(record: dict) -> dict:
    return {key: record[key] for key in ("index", "violates", "outcome", "case")}


def run(arch: str, violate, count: int, seed: int, ptxas: str, pool) -> dict:
    records = list(fuzz.generate("desc", arch, frozenset({violate} if violate else ()), count, seed))
    answers = list(pool.map(lambda r: verdict(r, ptxas), records))
    refused_labels = sum(r["outcome"] == "refused" for r in records)
    refused = sum(not a["accepted"] for a in answers)
    disagreements = [dict(slim(r), ptxas=a) for r, a in zip(records, answers)
                     if (r["outcome"] == "refused") == a["accepted"]]
    errors = collections.Counter(a["first_error"] for a in answers if not a["accepted"])
    keep = SAMPLES[refused_labels > 0]
    shapes = collections.Counter(f"cta_group::{r['case'].get('cta_group') or 1} M={r['case'].get('m') or 64}"
                                 + (" K=96" if r["case"]["k"] == 96 and r["case"]["dtype"] == "e2m1" else "")
                                 for r in records)
    return {"arch": arch, "violate": violate, "command": command(arch, violate, count, seed), "seed": seed,
            "asked": count, "cases": len(records), "outcomes": dict(collections.Counter(r["outcome"] for r in records)),
            "instructions": dict(sorted(shapes.items())),
            "labelled_refused": refused_labels, "refused_by_ptxas": refused,
            "agree": len(records) - len(disagreements), "errors": dict(errors),
            "module": module_verdict(records, ptxas) if records else None,
            "samples": [dict(slim(r), ptxas=a) for r, a in list(zip(records, answers))[:keep]],
            "disagreements": disagreements}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ptxas", default=None)
    parser.add_argument("--valid", type=int, default=300, help="valid cases per arch")
    parser.add_argument("--per-rule", type=int, default=30, help="cases per rule and arch")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--out", default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    ptxas = ptxas_adapter.find_ptxas(args.ptxas)
    if ptxas is None:
        print("ptxas not found", file=sys.stderr)
        return 2
    runs, tied = [], {}
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for arch in ARCHES:
            runs.append(run(arch, None, args.valid, 0, ptxas, pool))
            tied[arch] = []
            for position, rule_id in enumerate(desc_model.RULE_IDS, start=1):
                result = run(arch, rule_id, args.per_rule, position, ptxas, pool)
                if result["cases"]:
                    runs.append(result)
                else:
                    tied[arch].append(rule_id)
            print(f"{arch}: {sum(r['cases'] for r in runs if r['arch'] == arch)} cases", file=sys.stderr)
    enforced = {arch: ptxas_rules(arch) for arch in ARCHES}
    summary = {}
    for arch in ARCHES:
        mine = [r for r in runs if r["arch"] == arch]
        valid = next(r for r in mine if r["violate"] is None)
        by_ptxas = [r for r in mine if r["violate"] in enforced[arch]]
        others = [r for r in mine if r["violate"] is not None and r["violate"] not in enforced[arch]]
        summary[arch] = {
            "valid": {"cases": valid["cases"], "assembled": valid["cases"] - valid["refused_by_ptxas"]},
            "ptxas_rules": {"rules": len(by_ptxas), "cases": sum(r["cases"] for r in by_ptxas),
                            "labelled_refused": sum(r["labelled_refused"] for r in by_ptxas),
                            "refused_by_ptxas": sum(r["refused_by_ptxas"] for r in by_ptxas)},
            "other_rules": {"rules": len(others), "cases": sum(r["cases"] for r in others),
                            "labelled_refused": sum(r["labelled_refused"] for r in others),
                            "assembled": sum(r["cases"] - r["refused_by_ptxas"] for r in others)},
            "disagreements": sum(len(r["disagreements"]) for r in mine),
            "no_case_alone": tied[arch]}
    version = ptxas_adapter.ptxas_version(ptxas)
    header = provenance.header(
        what="ptxas's verdict on the kernels of `layoutproof fuzz --target desc --format ptx` for sm90, sm100 and "
             "sm103 (valid cases and every rule an arch can break alone), against the cases' labels.",
        recorded_by="hardware/run_desc_ptxas_agreement.py",
        command=provenance.command_line("hardware/run_desc_ptxas_agreement.py",
                                        argv if argv is not None else sys.argv[1:]),
        source=provenance.sentence(("ptxas:", version)), date=provenance.today(),
        details={"ptxas_version": version, "ptx_isa_version": fuzz_ptx.PTX_VERSION,
                 "note": "Each case's kernel is solver.fuzz.formats.ptx.render_case of the fuzz record (B = the "
                         "case's descriptor; sm90 wgmma.mma_async m64n{mn}k{k}; sm100/sm103 tcgen05.mma with the "
                         "case's .cta_group, M, N and K in the run-time instruction descriptor). Agreement: ptxas "
                         "refuses a case exactly when its label's outcome is 'refused'."})
    document = {
        "provenance": header,
        "ptxas_rules": enforced,
        "summary": summary,
        "runs": runs,
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    head = {key: value for key, value in document.items() if key != "runs"}
    lines = ["{"] + [f" {json.dumps(key)}: {json.dumps(value)}," for key, value in head.items()]
    lines += [' "runs": [', ",\n".join(f"  {json.dumps(r)}" for r in runs), " ]", "}", ""]
    provenance.write_text(args.out, "\n".join(lines))
    cases = sum(r["cases"] for r in runs)
    disagreeing = sum(len(r["disagreements"]) for r in runs)
    print(f"{cases} cases in {len(runs)} runs, {disagreeing} disagreements -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
