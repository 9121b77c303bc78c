"""`layoutproof fuzz --target tmem` (solver/fuzz/tmem.py, solver/model/tmem_form.py,
solver/fuzz/formats/tmem_ptx.py): every case breaks exactly the announced rules by spec.tmem.instruction
and by the Z3 model (written separately); every rule the coverage report calls breakable alone gets cases
and the tied ones none; valid cases break nothing; the same seed gives the same bytes; outcomes follow
spec (refused exactly when ptxas refuses, unknown with a witness for run-time breaks) and, where ptxas is
on PATH, ptxas itself; the command line and the hypothesis strategy."""
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
from hypothesis import given, settings

from solver.cli.main import main as cli_main
from solver.fuzz import coverage as fuzz_coverage
from solver.fuzz import engine as fuzz
from solver.fuzz import strategies
from solver.fuzz import tmem as fuzz_tmem
from solver.fuzz.formats import tmem_ptx
from solver.model import tmem_form as model
from spec.rules import all_rules
from spec.tmem import address as tmem_address
from spec.tmem import instruction as tmem_instruction

ARCHES = ("sm90", "sm100", "sm103")
COUNT = 10
NO_PTXAS_ENV = "LAYOUTPROOF_NO_PTXAS"


def generated(arch, violate, count=COUNT, seed=3):
    stats = fuzz.Stats()
    records = list(fuzz.generate("tmem", arch, frozenset(violate), count, seed, stats))
    assert stats.disagreements == [], stats.disagreements[:1]        # Z3 anchors that spec labels otherwise
    return records


@pytest.fixture(scope="module")
def tmem_coverage() -> dict:
    return {entry["id"]: entry for entry in fuzz_coverage.coverage("tmem")}


def spec_broken(case) -> tuple:
    """(broken rule ids, ptxas accepts) straight from spec.tmem.instruction.check."""
    result = tmem_instruction.check(case["ptx"], case["target"], case["ptx_version"], warp=case["warp"],
                                    address=tmem_address.encode(case["address"]["lane"], case["address"]["column"]))
    return {v.rule.id for v in result["violations"] + result["undefined"]}, result["ptxas_accepts"]


def check_record(record, expected: set):
    case = record["case"]
    broken, accepted = spec_broken(case)
    assert broken == expected and set(record["violates"]) == expected
    assert [r["id"] for r in record["rules"]] == record["violates"] and all(r["source"] for r in record["rules"])
    assert set(model.violated(fuzz_tmem.field_values(case))) == expected           # the independent model
    assert fuzz_tmem.case_of(fuzz_tmem.field_values(case)) == case                   # the text reads back
    assert record["outcome"] == ("refused" if not accepted else "undefined" if expected else "ok")


# --- Rules: breakable alone, or tied ----------------------------------------------------------------------
def test_rules_are_catalogue_rules_of_one_instruction():
    catalogue = {r.id: r for r in all_rules()}
    assert set(model.RULE_IDS) <= set(catalogue)
    assert all(catalogue[i].enforced_by in ("ptxas", "nobody") for i in model.RULE_IDS)
    assert fuzz_tmem.RULE_IDS == model.RULE_IDS and "tmem" in fuzz.TARGETS


@pytest.mark.parametrize("rule_id", model.RULE_IDS)
def test_rule_breaks_alone_by_spec_and_by_the_z3_model(rule_id, tmem_coverage):
    found = {arch: generated(arch, {rule_id}) for arch in ARCHES}
    if not tmem_coverage[rule_id]["breakable"]:
        assert not any(found.values()), f"coverage calls {rule_id} tied but a case breaks it alone"
        return
    assert any(found.values()), f"coverage calls {rule_id} breakable but no arch gives a case"
    for arch, records in found.items():
        for record in records:
            assert record["arch"] == arch and record["case"]["target"] in model.ARCH_TARGETS[arch]
            check_record(record, {rule_id})


def test_tied_rules_break_together(tmem_coverage):
    tied = [entry for entry in tmem_coverage.values() if not entry["breakable"]]
    # every tcgen05 target needs PTX 8.6+ (ld.red's 8.8+); a cp lane off 0 (.4x256b: off 0..31) puts a
    # copied row past lane 127
    assert [e["id"] for e in tied] == ["tmem.ptx_version", "tmem.cp.lane_alignment"]
    # A least set of companions is not unique: a PTX version below every tcgen05 target's minimum breaks a
    # target rule too, and which one (the version pairing, or the op's own target list) Z3 names is its choice.
    ties = {"tmem.ptx_version": {"tmem.target_ptx_version", "tmem.target", "tmem.ld.target",
                                 "tmem.ld_red.target"},
            "tmem.cp.lane_alignment": {"tmem.address.range"}}
    for entry in tied:
        assert len(entry["tied_to"]) == 1 and entry["tied_to"][0] in ties[entry["id"]], entry
        together = {entry["id"], *entry["tied_to"]}
        records = [record for arch in ARCHES for record in generated(arch, together)]
        assert records
        for record in records:
            check_record(record, together)
            assert record["outcome"] == ("refused" if entry["id"] == "tmem.ptx_version" else "undefined")


def test_run_time_rules_are_unknown_with_a_witness():
    for rule_id in ("tmem.access.lane_quarter", "tmem.address.range", "tmem.ld.lane_alignment", "tmem.ld.aligned"):
        for record in generated("sm100", {rule_id}, count=20):
            w = record["witness"]
            assert record["outcome"] == "undefined" and w["undefined"] == [rule_id] and w["because"]
            if rule_id == "tmem.access.lane_quarter":
                q = w["lane_quarter"]
                assert q["quarter"] == [32 * (record["case"]["warp"] % 4), 32 * (record["case"]["warp"] % 4) + 31]
                assert not q["quarter"][0] <= q["lane"] <= q["quarter"][1] and 0 <= q["thread"] < 32
            if rule_id == "tmem.address.range":
                a = w["address_range"]
                assert not (a["lane"] < 128 and a["column"] < 512)
                if record["case"]["ptx"].split(".")[1] not in ("cp", "shift"):     # cp / shift: no thread
                    assert 0 <= a["thread"] < 32


def test_refused_cases_say_why():
    for rule_id in ("tmem.ld.num", "tmem.ld_red.target", "tmem.instruction.operands"):
        for record in generated("sm100", {rule_id}):
            w = record["witness"]
            assert w["by"] == "ptxas" and w["instruction"] == record["case"]["ptx"]
            assert all(b.startswith(rule_id) for b in w["because"])


def random_copy_values(rng: random.Random) -> dict:
    """A tcgen05.cp / tcgen05.shift drawn at random over the model's domain."""
    v = dict.fromkeys(model.FIELDS, 0)
    v.update(op=rng.choice((model.CP, model.SHIFT)), registers=1, cta_group=rng.choice((0, 1, 1, 2, 2)),
             sync=int(rng.random() < .1), aligned=int(rng.random() < .1), qual=rng.choice((0, 0, 0, 0, 2, 3)),
             target=rng.randrange(len(model.TARGETS)), ptx=rng.randrange(len(model.PTX_VERSIONS)),
             warp=rng.randrange(8), column=rng.choice([rng.randrange(512), 0, 508, 504, rng.randrange(1 << 16)]))
    v["lane"] = rng.choice([0, 0, 32, 64, 96, rng.randrange(128), rng.randrange(1 << 16)])
    v["operand"] = rng.choice([0, 0, 0, 0, 1] + ([5] if v["op"] == model.CP else []))
    if v["op"] == model.CP:
        v["cp_shape"], v["fmt"] = rng.randrange(len(model.CP_SHAPES)), rng.choice((0, 0, 1, 2, 3, 4))
        fits = model.CP_MULTICASTS.get(model.CP_SHAPES[v["cp_shape"]], (None,))
        v["multicast"] = model.MULTICASTS.index(rng.choice(fits)) if rng.random() < .7 else rng.randrange(4)
    return v


def random_values(rng: random.Random) -> dict:
    """Field values drawn at random over the model's domain (most rules kept, several broken at once),
    not through Z3 or the generator: the differential tests' inputs (one in four a cp / shift)."""
    if rng.random() < .25:
        return random_copy_values(rng)
    v = dict.fromkeys(model.FIELDS, 0)
    v.update({"op": rng.randrange(3), "shape": rng.randrange(len(model.SHAPES)), "num_log2": rng.randrange(9),
         "pack": rng.randrange(3), "hs": rng.randrange(2)})
    v["hs_value"] = rng.choice([0, 16, -1, 65535, 65536, rng.randrange(-(1 << 17), 1 << 17)]) if v["hs"] else 0
    need = model.BASE_REGISTERS.get(model.SHAPES[v["shape"]], 1) << v["num_log2"]
    v["registers"] = max(1, min(2 * model.MAX_REGISTERS + 1, need + rng.choice([0, 0, 0, -1, 1])))
    v["sync"], v["aligned"] = int(rng.random() < .9), int(rng.random() < .9)
    v["qual"] = rng.choice([0, 0, 0, 1, 2] + ([3] if v["op"] != model.LD_RED else []))
    v["operand"] = rng.choice([0, 0, 0, 0, 1, 2, 3] + ([4] if v["op"] == model.LD_RED else []))
    if v["operand"] == 3:
        v["hs"], v["hs_value"] = 1, 0
    v["target"], v["ptx"] = rng.randrange(len(model.TARGETS)), rng.randrange(len(model.PTX_VERSIONS))
    v["red_op"] = rng.randrange(len(model.RED_OPS)) if v["op"] == model.LD_RED else 0
    v["red_type"] = rng.randrange(len(model.RED_TYPES)) if v["op"] == model.LD_RED else 0
    v["abs"], v["nan"], v["warp"] = int(rng.random() < .2), int(rng.random() < .2), rng.randrange(8)
    v["lane"] = rng.choice([rng.randrange(128), 32 * (v["warp"] % 4) + rng.choice([0, 16]), rng.randrange(1 << 16)])
    v["column"] = rng.choice([rng.randrange(512), 0, 511, rng.randrange(1 << 16)])
    return v


def test_model_and_spec_agree_on_random_forms():
    """Beyond the generated cases: random field values, many rules broken at once, judged by both."""
    rng = random.Random(2024)
    for _ in range(300):
        v = random_values(rng)
        case = fuzz_tmem.case_of(v)
        broken, _ = spec_broken(case)
        assert broken == set(model.violated(v)), case
        assert fuzz_tmem.field_values(case) == v


COPY_RULES = ("tmem.cp.shape", "tmem.cp.multicast", "tmem.cp.format", "tmem.shift.target",
              "tmem.shift.lane_alignment", "tmem.target")


@pytest.mark.parametrize("rule_id", COPY_RULES)
def test_cp_and_shift_rules_break_alone(rule_id):
    """Each tcgen05.cp / tcgen05.shift rule: cases of cp (or shift) that spec and the model both label
    with exactly that rule, on some arch."""
    kind = "shift" if rule_id.startswith("tmem.shift") else "cp"
    records = [r for arch in ARCHES for r in generated(arch, {rule_id})]
    assert records
    for record in records:
        check_record(record, {rule_id})
        assert record["outcome"] == ("undefined" if rule_id == "tmem.shift.lane_alignment" else "refused")
        if rule_id != "tmem.target":
            assert record["case"]["ptx"].startswith(f"tcgen05.{kind}.")


def test_cp_and_shift_break_the_shared_rules_alone():
    """cta_group (qualifiers), s-desc / taddr kind (operands), .sync (sync_aligned) and the range: some
    cases of each are cp or shift, labelled alike by spec and by the model."""
    for rule_id in ("tmem.instruction.qualifiers", "tmem.instruction.operands", "tmem.instruction.sync_aligned",
                    "tmem.address.range"):
        records = generated("sm100", {rule_id}, count=40)
        copies = [r for r in records if r["case"]["ptx"].split(".")[1] in ("cp", "shift")]
        assert copies, rule_id
        for record in copies:
            check_record(record, {rule_id})
    # each form alone, straight: no .cta_group, a .b32 s-desc, a [%rd] taddr, .sync, a type
    valid_cp = dict.fromkeys(model.FIELDS, 0)
    valid_cp.update(op=model.CP, registers=1, cta_group=1, target=model.TARGETS.index("sm_100a"),
                    ptx=model.PTX_VERSIONS.index("9.0"))
    valid_shift = dict(valid_cp, op=model.SHIFT)
    for base in (valid_cp, valid_shift):
        assert spec_broken(fuzz_tmem.case_of(base))[0] == set() and model.violated(base) == []
        for change, rule_id in (({"cta_group": 0}, "tmem.instruction.qualifiers"),
                                ({"qual": model.QUALS.index("u32")}, "tmem.instruction.qualifiers"),
                                ({"operand": model.OPERANDS.index("taddr_b64")}, "tmem.instruction.operands"),
                                ({"sync": 1}, "tmem.instruction.sync_aligned")) + (
                ((({"operand": model.OPERANDS.index("sdesc_b32")}, "tmem.instruction.operands"),)
                 if base is valid_cp else ())):
            v = dict(base, **change)
            case = fuzz_tmem.case_of(v)
            assert spec_broken(case)[0] == {rule_id} and model.violated(v) == [rule_id], case
            assert fuzz_tmem.field_values(case) == v


def test_cp_lane_alignment_is_tied_to_the_range():
    for record in generated("sm100", {"tmem.cp.lane_alignment", "tmem.address.range"}):
        assert record["case"]["ptx"].startswith("tcgen05.cp.")
        check_record(record, {"tmem.cp.lane_alignment", "tmem.address.range"})


def test_valid_cp_and_shift_assemble_with_ptxas():
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        pytest.skip("ptxas is not on PATH (CUDA 13.0 toolkit): the tmem kernels are not assembled")
    records = [r for arch in ("sm100", "sm103") for r in generated(arch, set(), count=40, seed=4)
               if r["case"]["ptx"].split(".")[1] in ("cp", "shift")]
    assert {r["case"]["ptx"].split(".")[1] for r in records} == {"cp", "shift"}
    assert any("cta_group::2" in r["case"]["ptx"] for r in records)
    with tempfile.TemporaryDirectory() as work:
        for record in records:
            target, text = tmem_ptx.render_case(record)
            source = os.path.join(work, "case.ptx")
            with open(source, "w") as handle:
                handle.write(text)
            result = subprocess.run([ptxas, f"-arch={target}", source, "-o", os.path.join(work, "case.cubin")],
                                    capture_output=True, text=True, timeout=120)
            assert result.returncode == 0, (record["case"], result.stderr[:400])


# --- Valid cases, determinism, variety ---------------------------------------------------------------------
@pytest.mark.parametrize("arch", ["sm100", "sm103"])
def test_valid_cases_break_nothing(arch):
    records = generated(arch, set(), count=40)
    assert len(records) == 40
    for record in records:
        check_record(record, set())
        assert record["witness"] is None
    ops = {r["case"]["ptx"].split(".")[1] for r in records}
    assert {"ld", "st"} <= ops
    assert len({r["case"]["ptx"].split(" ")[0] for r in records}) >= 10
    assert {"cp", "shift"} <= ops


def test_no_valid_case_on_sm90():
    assert generated("sm90", set(), count=3) == []            # tcgen05 does not exist on sm_90a


def test_same_seed_same_cases_in_one_process():
    def campaign(seed):
        return json.dumps(list(fuzz.generate("tmem", "sm100", frozenset({"tmem.access.lane_quarter"}), 5, seed)))
    first = campaign(11)
    campaign(12)
    assert campaign(11) == first and campaign(12) != first


def test_same_seed_same_bytes_on_the_command_line():
    def run(seed):
        command = [sys.executable, "-m", "layoutproof", "fuzz", "--target", "tmem", "--arch", "sm103",
                   "--violate", "tmem.address.range", "--count", "30", "--seed", str(seed)]
        return subprocess.run(command, capture_output=True, text=True, check=True).stdout
    one, two, other = run(7), run(7), run(8)
    assert one == two and one != other
    texts = [json.dumps(json.loads(line)["case"], sort_keys=True) for line in one.splitlines()]
    assert len(texts) == 30 and len(set(texts)) == 30


# --- The command line ------------------------------------------------------------------------------------------
def run_cli(args, capsys):
    code = cli_main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_jsonl_follows_the_record_contract(capsys):
    code, out, _ = run_cli(["fuzz", "--target", "tmem", "--arch", "sm100", "--count", "4", "--seed", "5",
                            "--violate", "tmem.ld.registers"], capsys)
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(lines) == 4
    for index, line in enumerate(lines):
        assert set(line) == {"index", "target", "arch", "violates", "outcome", "witness", "case", "rules"}
        assert line["index"] == index and line["target"] == "tmem" and line["arch"] == "sm100"   # tmem's default
        assert line["violates"] == ["tmem.ld.registers"] and line["outcome"] == "refused"
        assert set(line["case"]) == {"ptx", "target", "ptx_version", "warp", "address"}
        assert set(line["rules"][0]) == {"id", "source", "statement", "evidence"}


def test_cli_valid_sm90_exits_1_and_bad_rule_exits_2(capsys):
    code, out, err = run_cli(["fuzz", "--target", "tmem", "--arch", "sm90", "--valid", "--count", "2"], capsys)
    assert code == 1 and out == "" and "coverage" in err
    code, out, err = run_cli(["fuzz", "--target", "tmem", "--arch", "sm100", "--violate", "desc.tile.swizzle"], capsys)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1


def test_cli_coverage_lists_every_tmem_rule(capsys):
    code, out, _ = run_cli(["fuzz", "--coverage", "--target", "tmem", "--json"], capsys)
    rules = json.loads(out)["targets"]["tmem"]["rules"]
    assert code == 0 and [r["id"] for r in rules] == list(model.RULE_IDS)


def test_cli_format_ptx_writes_one_module_per_target(tmp_path, capsys):
    code, _, _ = run_cli(["fuzz", "--target", "tmem", "--arch", "sm103", "--count", "12", "--format", "ptx",
                          "--out", str(tmp_path)], capsys)
    records = [json.loads(line) for line in (tmp_path / "cases.jsonl").read_text().splitlines()]
    modules = sorted(p.name for p in tmp_path.glob("*.ptx"))
    assert code == 0 and len(records) == 12 and modules
    kernels = 0
    for name in modules:
        text = (tmp_path / name).read_text()
        target = re.search(r"^\.target (\S+)$", text, re.M).group(1)
        assert name.startswith(f"fuzz_tmem_{target}") and text.count(".version ") == 1
        kernels += len(re.findall(r"\.entry fuzz_tmem_case_\d+\(", text))
    assert kernels == 12


# --- ptxas: valid and run-time cases assemble, refused cases are refused ----------------------------------------
def _sample_records() -> list:
    """Two generated cases per (rule, arch) and valid, and 60 random forms (several rules broken at once)."""
    records = []
    for rule_id in (None,) + model.RULE_IDS:
        for arch in ARCHES:
            records += generated(arch, {rule_id} if rule_id else set(), count=2, seed=9)
    rng = random.Random(5)
    for index in range(60):
        case = fuzz_tmem.case_of(random_values(rng))
        found = fuzz_tmem.label(case, "sm100")
        records.append(fuzz.record("tmem", "sm100", index, case, found))
    return records


def _instruction_line(text: str, instruction: str) -> int:
    return next(i for i, line in enumerate(text.split("\n"), 1) if line.strip() == instruction + ";")


def test_ptxas_agrees_with_the_labels():
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        if os.environ.get(NO_PTXAS_ENV) == "1":
            pytest.skip(f"ptxas not on PATH and {NO_PTXAS_ENV}=1")
        pytest.skip("ptxas is not on PATH (CUDA 13.0 toolkit): the tmem kernels are not assembled")
    records = _sample_records()
    assert len(records) >= 40
    refused = 0
    with tempfile.TemporaryDirectory() as work:
        for record in records:
            target, text = tmem_ptx.render_case(record)
            source = os.path.join(work, "case.ptx")
            with open(source, "w") as handle:
                handle.write(text)
            result = subprocess.run([ptxas, f"-arch={target}", source, "-o", os.path.join(work, "case.cubin")],
                                    capture_output=True, text=True, timeout=120)
            context = (record["violates"], record["case"], result.stderr[:400])
            if record["outcome"] != "refused":
                assert result.returncode == 0, context
                continue
            refused += 1
            assert result.returncode != 0, context
            # the instruction itself is refused (or the module's .version / .target pair)
            lines = {int(n) for n in re.findall(r"line (\d+);", result.stderr)}
            module_level = "does not support .target" in result.stderr
            assert _instruction_line(text, record["case"]["ptx"]) in lines or module_level, context
    assert refused >= 20


# --- hypothesis ------------------------------------------------------------------------------------------------
@settings(max_examples=25, deadline=None)
@given(strategies.tmem_forms(arch="sm103", violate=["tmem.access.lane_quarter"], pool_size=40),
       strategies.tmem_forms(arch="sm100", pool_size=40, op="st"))
def test_strategy_tmem_forms(breaking, valid):
    assert breaking["violates"] == ["tmem.access.lane_quarter"] and breaking["outcome"] == "undefined"
    assert valid["outcome"] == "ok" and valid["case"]["ptx"].startswith("tcgen05.st.")


@pytest.mark.filterwarnings("ignore::hypothesis.errors.NonInteractiveExampleWarning")
def test_strategy_for_an_impossible_request_says_so():
    with pytest.raises(ValueError, match="tmem.ptx_version"):
        strategies.tmem_forms(arch="sm100", violate=["tmem.ptx_version"], pool_size=5).example()
