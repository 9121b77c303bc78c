"""Fuzz cases against the CUDA driver's tensor-map encoders: the evidence behind `fuzz --against`.

    python3 hardware/fuzz_against_driver.py cases --arch sm90 --per-rule 40 --valid 400 [--wide 0] > cases.jsonl
    (on the GPU machine)  python3 -m solver.fuzz.adapters.driver_encode < cases.jsonl > answers.jsonl
    python3 hardware/fuzz_against_driver.py record cases.jsonl answers.jsonl \\
        --out tests/hardware/fuzz_driver_sm90.json.gz --cases-args '--arch sm90 --per-rule 40 --valid 400' \\
        --driver '580.159.04 (NVIDIA H100 80GB HBM3), cuda-bindings 13.3.1'

`cases` writes `layoutproof fuzz --target tensormap` records (seed = the rule's position) for every rule
that can be broken alone on the arch, and valid ones; with --wide N also N im2col_wide maps that break only
tma.map.im2col_wide.arch (sm90 has no valid im2col_wide map, and its driver does not check the arch), and
--per-rule maps breaking each im2col_wide rule together with that arch rule;
`record` joins each record with the driver's answer, under the provenance header (solver/provenance.py; its
command is the three steps, `cases` with --cases-args). tests/hardware_replay/test_fuzz_against_replay.py replays the
recordings: the driver refuses exactly the cases we label "refused", except the disagreements kept in
counterexamples/ with a note.

Recorded: fuzz_driver_sm90.json.gz (issue 7: --per-rule 40 --valid 400) and fuzz_driver_labels_sm90.json.gz
(issue 14: --per-rule 100 --valid 12000 --wide 5000, after the driver's rules were fixed).
"""
from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from solver import provenance  # noqa: E402
from solver.fuzz import engine as fuzz  # noqa: E402
from solver.model import tensormap as tensormap_model  # noqa: E402


def cases(arch: str, per_rule: int, valid: int, wide: int = 0):
    yield from fuzz.generate("tensormap", arch, frozenset(), valid, 0)
    for position, rule_id in enumerate(tensormap_model.RULE_IDS, start=1):
        yield from fuzz.generate("tensormap", arch, frozenset({rule_id}), per_rule, position)
    if wide:
        arch_rule = "tma.map.im2col_wide.arch"
        yield from fuzz.generate("tensormap", arch, frozenset({arch_rule}), wide, len(tensormap_model.RULE_IDS) + 1)
        # the im2col_wide rules, each with the arch rule (the only way an sm90 map breaks them)
        for position, rule_id in enumerate(tensormap_model.RULE_IDS, start=len(tensormap_model.RULE_IDS) + 2):
            if rule_id != arch_rule and tensormap_model.RULES[rule_id].encodes in (("im2col_wide",), ("im2col", "im2col_wide")):
                yield from fuzz.generate("tensormap", arch, frozenset({rule_id, arch_rule}), per_rule, position)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    make = commands.add_parser("cases")
    make.add_argument("--arch", default="sm90")
    make.add_argument("--per-rule", type=int, default=40)
    make.add_argument("--valid", type=int, default=400)
    make.add_argument("--wide", type=int, default=0)
    join = commands.add_parser("record")
    join.add_argument("cases")
    join.add_argument("answers")
    join.add_argument("--out", required=True)
    join.add_argument("--driver", default="", help="the driver version the answers came from")
    join.add_argument("--cases-args", default="--arch sm90 --per-rule 40 --valid 400",
                      help="the options `cases` was given (for the recorded command)")
    args = parser.parse_args()
    if args.command == "cases":
        for record in cases(args.arch, args.per_rule, args.valid, args.wide):
            record.pop("rules", None)
            print(json.dumps(record))
        return 0
    with open(args.cases) as c, open(args.answers) as a:
        records = [json.loads(line) for line in c if line.strip()]
        answers = [json.loads(line) for line in a if line.strip()]
    assert len(records) == len(answers), (len(records), len(answers))
    joined = [{"violates": r["violates"], "outcome": r["outcome"], "arch": r["arch"], "case": r["case"],
               "driver": a} for r, a in zip(records, answers)]
    adapter = "python3 -m solver.fuzz.adapters.driver_encode"
    header = provenance.header(
        what=f"`layoutproof fuzz --target tensormap` cases ({args.cases_args}), each with its labels and the CUDA "
             "driver's answer.",
        recorded_by="hardware/fuzz_against_driver.py",
        command=f"python3 hardware/fuzz_against_driver.py cases {args.cases_args} > cases.jsonl && {adapter} < "
                "cases.jsonl > answers.jsonl && " + provenance.command_line(
                    "hardware/fuzz_against_driver.py", ["record", "cases.jsonl", "answers.jsonl", "--out", args.out,
                                                        "--driver", args.driver]),
        source=f"driver {args.driver}" if args.driver else provenance.NOT_RECORDED, date=provenance.today(),
        details={"driver": args.driver, "adapter": "python -m solver.fuzz.adapters.driver_encode"})
    provenance.write_json(args.out, {"provenance": header, "cases": joined})
    return 0


if __name__ == "__main__":
    sys.exit(main())
