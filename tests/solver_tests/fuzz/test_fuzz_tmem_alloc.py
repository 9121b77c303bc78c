"""`layoutproof fuzz --target tmem-alloc` (solver/fuzz/tmem_alloc.py, solver/model/tmem_alloc.py,
solver/fuzz/formats/tmem_alloc_ptx.py): every case breaks exactly the announced rules by
spec.tmem.alloc.check_sequence and by the Z3 model (written separately); every rule breaks alone (a
hand-written sequence shows it can, and the coverage report agrees); valid cases are ok; the same seed
gives the same bytes; the outcomes are what the manual and ptxas say: ptxas 13.0 refuses a function that
mixes .cta_group::1 and ::2, an alloc beyond the 512 columns waits forever (PTX 9.7.16.7.1: it blocks until
the columns are free), every other broken rule is unknown; the PTX modules assemble with the local
ptxas unless refused."""
from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

import pytest

from solver.cli.main import main as cli_main
from solver.fuzz import coverage as fuzz_coverage
from solver.fuzz import engine as fuzz
from solver.fuzz import tmem_alloc as fuzz_alloc
from solver.fuzz.formats import tmem_alloc_ptx
from solver.fuzz.outcome import OUTCOMES
from solver.model import tmem_alloc as model
from spec.rules import all_rules
from spec.tmem import alloc as spec_alloc

TARGET = "tmem-alloc"
LEGAL = (32, 64, 128, 256, 512)          # PTX 9.7.16.7.1: a power of 2 in [32, 512]
CAPACITY = 512                           # PTX 9.7.16.1: 512 columns
NO_PTXAS_ENV = "LAYOUTPROOF_NO_PTXAS"
MIXED_CTA_GROUP = "uses single CTA(.cta_group::1) and CTA pair granularity(.cta_group::2) and that is not allowed"


def generated(violate, arch="sm100", count=12, seed=3):
    stats = fuzz.Stats()
    records = list(fuzz.generate(TARGET, arch, frozenset(violate), count, seed, stats))
    assert stats.disagreements == [], stats.disagreements[:1]        # Z3 anchors that spec labels otherwise
    return records


REQUESTS = (None,) + model.RULE_IDS          # valid, then each rule alone
ARCHES = ("sm100", "sm103")


@pytest.fixture(scope="module")
def campaigns() -> dict:
    """(arch, rule id or None) -> 10 generated records: shared by the rule, valid and ptxas tests."""
    return {(arch, rule_id): generated({rule_id} if rule_id else set(), arch=arch, count=10)
            for arch in ARCHES for rule_id in REQUESTS}


def spec_broken(case) -> set:
    return {v.rule.id for _, v in spec_alloc.check_sequence(case["ops"])}


def op(kind, columns=None, address=None, warp=0, cta_group=1) -> dict:
    if kind == "relinquish_alloc_permit":
        return {"op": kind, "warp": warp, "cta_group": cta_group}
    return {"op": kind, "warp": warp, "columns": columns, "cta_group": cta_group, "address": address}


# One hand-written sequence per rule that breaks it and nothing else (the case format: an alloc's address
# is its own index, a dealloc's the index it frees).
ALONE = {
    "tmem.alloc.columns.run_time": [op("alloc", 48, 0), op("dealloc", 48, 0)],
    "tmem.alloc.single_warp": [op("alloc", 64, 0, warp=0), op("dealloc", 64, 0, warp=1)],
    "tmem.alloc.dealloc_all": [op("alloc", 64, 0)],
    "tmem.alloc.dealloc_live": [op("alloc", 64, 0), op("dealloc", 64, 0), op("dealloc", 64, 0)],
    "tmem.alloc.dealloc_columns": [op("alloc", 64, 0), op("dealloc", 32, 0)],
    "tmem.alloc.cta_group_uniform": [op("alloc", 64, 0), op("dealloc", 64, 0, cta_group=2)],
    "tmem.alloc.after_relinquish": [op("relinquish_alloc_permit", warp=5), op("alloc", 64, 1), op("dealloc", 64, 1)],
    "tmem.alloc.capacity": [op("alloc", 512, 0), op("alloc", 32, 1), op("dealloc", 32, 1), op("dealloc", 512, 0)],
    "tmem.alloc.non_increasing": [op("alloc", 32, 0), op("alloc", 64, 1), op("dealloc", 64, 1), op("dealloc", 32, 0)],
}
VALID = [op("alloc", 256, 0, warp=2), op("alloc", 128, 1, warp=2), op("relinquish_alloc_permit", warp=6),
         op("dealloc", 128, 1, warp=2), op("dealloc", 256, 0, warp=2)]


# --- What the manual says each rule means, for the witnesses (a replay of the sequence, not spec) ----------
def live_before(ops, index) -> dict:
    """address -> columns of the allocations live just before ops[index]: an alloc adds its own index,
    the first dealloc naming a live one frees it."""
    live = {}
    for i, o in enumerate(ops[:index]):
        if o["op"] == "alloc":
            live[i] = o["columns"]
        elif o["op"] == "dealloc":
            live.pop(o["address"], None)
    return live


def previous_alloc(ops, index):
    return next((o for o in reversed(ops[:index]) if o["op"] == "alloc"), None)


def witness_holds(rule_id, ops, i) -> bool:
    """Does ops[i] break rule_id, read from the manual's statement (PTX 9.7.16.1.2, 9.7.16.7.1)?"""
    o = ops[i]
    managed = [x for x in ops if x["op"] != "relinquish_alloc_permit"]
    return {
        "tmem.alloc.columns.run_time": lambda: o["op"] != "relinquish_alloc_permit" and o["columns"] not in LEGAL,
        "tmem.alloc.single_warp": lambda: o["op"] != "relinquish_alloc_permit" and o["warp"] != managed[0]["warp"],
        "tmem.alloc.dealloc_all": lambda: o["op"] == "alloc" and not any(
            x["op"] == "dealloc" and x["address"] == i for x in ops[i + 1:]),
        "tmem.alloc.dealloc_live": lambda: o["op"] == "dealloc" and o["address"] not in live_before(ops, i),
        "tmem.alloc.dealloc_columns": lambda: o["op"] == "dealloc" and live_before(ops, i).get(o["address"]) not in (
            None, o["columns"]),
        "tmem.alloc.cta_group_uniform": lambda: o["cta_group"] != ops[0]["cta_group"],
        "tmem.alloc.after_relinquish": lambda: o["op"] == "alloc" and any(
            x["op"] == "relinquish_alloc_permit" for x in ops[:i]),
        "tmem.alloc.capacity": lambda: o["op"] == "alloc"
        and sum(live_before(ops, i).values()) + o["columns"] > CAPACITY,
        "tmem.alloc.non_increasing": lambda: o["op"] == "alloc" and previous_alloc(ops, i) is not None
        and previous_alloc(ops, i)["columns"] < o["columns"],
    }[rule_id]()


def expected_outcome(rule_ids) -> str:
    """ptxas refuses mixed .cta_group (recorded from ptxas 13.0); an alloc beyond 512 columns blocks for
    ever; the manual calls none of the others undefined: unknown."""
    if "tmem.alloc.cta_group_uniform" in rule_ids:
        return "refused"
    if "tmem.alloc.capacity" in rule_ids:
        return "hang"
    return "unknown" if rule_ids else "ok"


def check_record(record, expected: set):
    case = record["case"]
    assert spec_broken(case) == expected and set(record["violates"]) == expected
    assert set(model.violated(fuzz_alloc.field_values(case))) == expected          # the independent model
    assert [r["id"] for r in record["rules"]] == record["violates"] and all(r["source"] for r in record["rules"])
    assert 1 <= len(case["ops"]) <= model.MAX_OPS
    assert all(o["address"] == i for i, o in enumerate(case["ops"]) if o["op"] == "alloc")
    assert record["outcome"] == expected_outcome(expected) and record["outcome"] in OUTCOMES


# --- Rules: each breaks alone ---------------------------------------------------------------------------------
def test_rules_are_the_catalogue_rules_of_an_allocation_sequence():
    sequence_rules = [r.id for r in all_rules() if "tmem_alloc_sequence" in r.subjects]
    assert set(model.RULE_IDS) == set(sequence_rules) and fuzz_alloc.RULE_IDS == model.RULE_IDS
    assert TARGET in fuzz.TARGETS and fuzz.target_module(TARGET) is fuzz_alloc


@pytest.mark.parametrize("rule_id", sorted(ALONE))
def test_a_hand_written_sequence_breaks_the_rule_alone_by_spec_and_by_the_model(rule_id):
    case = {"ops": ALONE[rule_id]}
    assert spec_broken(case) == {rule_id}
    assert model.violated(fuzz_alloc.field_values(case)) == [rule_id]
    assert spec_broken({"ops": VALID}) == set() and model.violated(fuzz_alloc.field_values({"ops": VALID})) == []


def test_coverage_calls_every_rule_breakable_alone():
    report = fuzz_coverage.coverage(TARGET)
    assert [r["id"] for r in report] == list(model.RULE_IDS)
    assert all(r["breakable"] and r["tied_to"] == [] for r in report), report
    graph = fuzz_coverage.rule_field_graph(TARGET)
    assert ("field", "names") in graph[("rule", "tmem.alloc.dealloc_live")]
    assert ("field", "cta_group") in graph[("rule", "tmem.alloc.cta_group_uniform")]


@pytest.mark.parametrize("rule_id", model.RULE_IDS)
def test_generated_cases_break_the_rule_alone_with_the_outcome_and_witness_the_manual_gives(rule_id, campaigns):
    records = campaigns["sm100", rule_id] + campaigns["sm103", rule_id]
    assert len(records) == 20
    for record in records:
        check_record(record, {rule_id})
        w, ops = record["witness"], record["case"]["ops"]
        assert witness_holds(rule_id, ops, w["index"]), (w, ops)
        # the first operation that breaks it: none before the witness's index does
        assert not any(witness_holds(rule_id, ops, i) for i in range(w["index"])), (w, ops)
        assert w["because"] and all(b.startswith(rule_id + ": ops[") for b in w["because"])
        assert w["because"][0].startswith(f"{rule_id}: ops[{w['index']}]")
    if rule_id == "tmem.alloc.cta_group_uniform":
        assert all(record["witness"]["by"] == "ptxas" for record in records)
        assert all({o["cta_group"] for o in record["case"]["ops"]} == {1, 2} for record in records)


def test_two_rules_at_once_take_the_worse_outcome():
    for rules, worst in (({"tmem.alloc.cta_group_uniform", "tmem.alloc.capacity"}, "refused"),
                         ({"tmem.alloc.capacity", "tmem.alloc.dealloc_all"}, "hang"),
                         ({"tmem.alloc.single_warp", "tmem.alloc.non_increasing"}, "unknown")):
        records = generated(rules, count=5)
        assert records
        for record in records:
            check_record(record, rules)
            assert record["outcome"] == worst


# --- Valid cases, determinism, variety -------------------------------------------------------------------------
def test_valid_cases_are_ok(campaigns):
    records = campaigns["sm100", None] + campaigns["sm103", None]
    assert len(records) == 20
    for record in records:
        check_record(record, set())
        assert record["witness"] is None
    kinds = {o["op"] for record in records for o in record["case"]["ops"]}
    assert kinds == {"alloc", "dealloc", "relinquish_alloc_permit"}
    assert len({len(record["case"]["ops"]) for record in records}) >= 3
    assert {o["cta_group"] for record in records for o in record["case"]["ops"]} == {1, 2}


def test_no_case_on_sm90():
    assert generated(set(), arch="sm90", count=3) == []            # no tensor memory on sm_90a


def test_model_and_spec_agree_on_random_sequences():
    """Beyond the generated cases: random sequences, several rules broken at once, judged by both."""
    rng = random.Random(2025)
    for _ in range(200):
        ops = []
        for i in range(rng.randint(1, model.MAX_OPS)):
            kind = rng.choice(("alloc", "alloc", "dealloc", "dealloc", "relinquish_alloc_permit"))
            ops.append(op(kind, rng.choice(LEGAL + (0, 48, 1024)), i if kind == "alloc" else rng.randrange(8),
                          warp=rng.choice((0, 0, 0, rng.randrange(8))), cta_group=rng.choice((1, 1, 1, 2))))
        for o in ops:
            if o["op"] == "dealloc":
                o["address"] %= len(ops)
        case = {"ops": ops}
        assert spec_broken(case) == set(model.violated(fuzz_alloc.field_values(case))), ops


def test_same_seed_same_bytes_on_the_command_line():
    def run(seed):
        command = [sys.executable, "-m", "layoutproof", "fuzz", "--target", TARGET, "--arch", "sm100", "--violate",
                   "tmem.alloc.dealloc_live", "--count", "30", "--seed", str(seed)]
        return subprocess.run(command, capture_output=True, text=True, check=True).stdout
    one, two, other = run(7), run(7), run(8)
    assert one == two and one != other
    cases = [json.dumps(json.loads(line)["case"], sort_keys=True) for line in one.splitlines()]
    assert len(cases) == 30 and len(set(cases)) == 30


# --- The command line ------------------------------------------------------------------------------------------
def run_cli(args, capsys):
    code = cli_main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_jsonl_case_is_a_tmem_alloc_document(capsys, tmp_path):
    code, out, _ = run_cli(["fuzz", "--target", TARGET, "--arch", "sm100", "--count", "3", "--seed", "5",
                            "--violate", "tmem.alloc.after_relinquish"], capsys)
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(lines) == 3 and all(line["arch"] == "sm100" for line in lines)     # the default
    for line in lines:
        assert set(line) == {"index", "target", "arch", "violates", "outcome", "witness", "case", "rules"}
        path = tmp_path / "ops.json"
        path.write_text(json.dumps(line["case"]))
        code, out, _ = run_cli(["tmem", "alloc", "--ops", str(path), "--json"], capsys)       # what `tmem alloc` says
        assert code == 1 and {v["rule"] for v in json.loads(out)["violations"]} == {"tmem.alloc.after_relinquish"}


def test_cli_sm90_and_a_foreign_rule_exit_2(capsys):
    for args in (["--arch", "sm90"], ["--violate", "tmem.access.lane_quarter"]):
        code, out, err = run_cli(["fuzz", "--target", TARGET, "--arch", "sm100", "--count", "2"] + args, capsys)
        assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, (args, err)


def test_cli_format_ptx_writes_one_module_per_case(tmp_path, capsys):
    code, _, _ = run_cli(["fuzz", "--target", TARGET, "--arch", "sm103", "--count", "5", "--seed", "2",
                          "--format", "ptx", "--out", str(tmp_path)], capsys)
    records = [json.loads(line) for line in (tmp_path / "cases.jsonl").read_text().splitlines()]
    assert code == 0 and len(records) == 5
    assert sorted(p.name for p in tmp_path.glob("*.ptx")) == sorted(f"fuzz_tmem_alloc_case_{i}.ptx" for i in range(5))
    for record in records:
        text = (tmp_path / f"fuzz_tmem_alloc_case_{record['index']}.ptx").read_text()
        assert re.search(r"^\.target sm_103a$", text, re.M) and text.count(".entry ") == 1
        ops = record["case"]["ops"]
        # each operation once, in order, with its nCols in a register
        issued = re.findall(r"^\s*tcgen05\.(alloc|dealloc|relinquish_alloc_permit)\.", text, re.M)
        assert issued == [o["op"] for o in ops]


# --- ptxas: modules assemble unless refused ------------------------------------------------------------------
def _ptxas() -> str:
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        if os.environ.get(NO_PTXAS_ENV) == "1":
            pytest.skip(f"ptxas not on PATH and {NO_PTXAS_ENV}=1")
        pytest.fail(f"ptxas not on PATH (CUDA 13.0); set {NO_PTXAS_ENV}=1 to skip")
    return ptxas


def _assemble(ptxas, target, text, work) -> subprocess.CompletedProcess:
    source = os.path.join(work, "case.ptx")
    with open(source, "w") as handle:
        handle.write(text)
    return subprocess.run([ptxas, f"-arch={target}", source, "-o", os.path.join(work, "case.cubin")],
                          capture_output=True, text=True, timeout=120)


def _sample_records(campaigns) -> list:
    """About 250 records: the 10 per (arch, request) for valid and every rule, and 50 random sequences
    (several rules broken at once) labelled by the target's label, re-indexed so that kernel names differ."""
    records = [dict(record) for records in campaigns.values() for record in records]
    rng = random.Random(11)
    for _ in range(50):
        ops = [op(rng.choice(("alloc", "dealloc", "relinquish_alloc_permit")), rng.choice(LEGAL + (48,)), 0,
                  warp=rng.randrange(8), cta_group=rng.choice((1, 1, 1, 2))) for _ in range(rng.randint(1, 8))]
        for i, o in enumerate(ops):
            if o["op"] != "relinquish_alloc_permit":
                o["address"] = i if o["op"] == "alloc" else rng.randrange(len(ops))
        records.append(fuzz.record(TARGET, "sm100", 0, {"ops": ops}, fuzz_alloc.label({"ops": ops}, "sm100")))
    for index, record in enumerate(records):
        record["index"] = index
    return records


def _one_module(target: str, records: list) -> str:
    """The kernels of the records' modules (their text after the header), in one module for `target`."""
    bodies = [tmem_alloc_ptx.render_case(r)[1].split(".address_size 64\n", 1)[1] for r in records
              if tmem_alloc_ptx.target_of(r) == target]
    return f".version {tmem_alloc_ptx.PTX_VERSION}\n.target {target}\n.address_size 64\n" + "\n".join(bodies)


def test_ptx_modules_assemble_unless_refused(campaigns):
    """Accepted cases: their kernels, in one module per target, assemble; five of them also as the module
    the format writes. Refused cases: ptxas refuses each kernel for mixing .cta_group::1 and ::2 (it names
    every such function), and five of the modules the format writes alone."""
    ptxas = _ptxas()
    records = _sample_records(campaigns)
    refused = [r for r in records if r["outcome"] == "refused"]
    accepted = [r for r in records if r["outcome"] != "refused"]
    assert len(records) >= 240 and len(refused) >= 20 and len(accepted) >= 180
    with tempfile.TemporaryDirectory() as work:
        for target in ("sm_100a", "sm_103a"):
            result = _assemble(ptxas, target, _one_module(target, accepted), work)
            assert result.returncode == 0, result.stderr[:600]
            result = _assemble(ptxas, target, _one_module(target, refused), work)
            named = {int(n) for n in re.findall(r"Function 'fuzz_tmem_alloc_case_(\d+)' " + re.escape(MIXED_CTA_GROUP),
                                                result.stderr)}
            assert result.returncode != 0
            assert named == {r["index"] for r in refused if tmem_alloc_ptx.target_of(r) == target}, result.stderr[:600]
        for record in accepted[::len(accepted) // 5][:5]:
            result = _assemble(ptxas, *tmem_alloc_ptx.render_case(record), work)
            assert result.returncode == 0, (record["case"], result.stderr[:400])
        for record in refused[::len(refused) // 5][:5]:
            result = _assemble(ptxas, *tmem_alloc_ptx.render_case(record), work)
            assert result.returncode != 0, record["case"]
            refusal = f"Function 'fuzz_tmem_alloc_case_{record['index']}' {MIXED_CTA_GROUP}"
            assert refusal in result.stderr, result.stderr


def test_ptxas_adapter_answers_tmem_alloc_records():
    _ptxas()
    records = generated({"tmem.alloc.cta_group_uniform"}, count=2) + generated(set(), arch="sm103", count=2)
    answers = subprocess.run([sys.executable, "-m", "solver.fuzz.adapters.ptxas"], capture_output=True, text=True,
                             input="".join(json.dumps(r) + "\n" for r in records), check=True).stdout.splitlines()
    verdicts = [json.loads(line) for line in answers]
    assert [v["verdict"] for v in verdicts] == ["refuse", "refuse", "accept", "accept"]
    assert all(MIXED_CTA_GROUP in v["detail"] for v in verdicts[:2])


# --- the hypothesis strategy ---------------------------------------------------------------------------------
from hypothesis import given, settings  # noqa: E402

from solver.fuzz import strategies  # noqa: E402
from spec.tmem import alloc as spec_alloc  # noqa: E402


@settings(max_examples=20, deadline=None)
@given(strategies.tmem_allocations(violate=["tmem.alloc.dealloc_all"], pool_size=20),
       strategies.tmem_allocations(pool_size=20))
def test_strategy_tmem_allocations(breaking, valid):
    """Drawn sequences are what spec's checker says: the asked rule alone, or nothing."""
    assert {v.rule.id for _, v in spec_alloc.check_sequence(breaking["case"]["ops"])} == {"tmem.alloc.dealloc_all"}
    assert spec_alloc.check_sequence(valid["case"]["ops"]) == []
