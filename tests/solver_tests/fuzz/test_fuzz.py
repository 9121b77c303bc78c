"""`layoutproof fuzz` (solver/fuzz*.py): every generated case breaks exactly the announced rules, by
spec/ and by the target's Z3 model (written separately); every rule the coverage report calls breakable
gets cases; the same seed gives the same cases; no duplicates; outcomes agree with the evidence (the
read map for wrong-data, ptxas for refusals); the command line of docs/CLI.md."""
from __future__ import annotations

import json
from repo_paths import TESTS_DIR  # noqa: E402  (tests/repo_paths.py)
import subprocess
import sys

import pytest
from hypothesis import given, settings

from solver.model import desc_case as desc_case_model
from solver.fuzz import engine as fuzz
from solver.fuzz import coverage as fuzz_coverage
from solver.fuzz import strategies
from solver.fuzz.outcome import OUTCOMES
from solver.model import tensormap as tensormap_model
from solver.cli.main import main as cli_main
from spec.cases import desc_case as spec_desc_case

ARCHES = ("sm90", "sm100", "sm103")
COUNT = 12


def generated(target, arch, violate, count=COUNT, seed=3):
    stats = fuzz.Stats()
    records = list(fuzz.generate(target, arch, frozenset(violate), count, seed, stats))
    assert stats.disagreements == [], stats.disagreements[:1]       # Z3 model and spec agree on anchors
    return records


def first_arch_with_cases(target, rule_id):
    for arch in ARCHES:
        records = generated(target, arch, {rule_id})
        if records:
            return arch, records
    return None, []


# --- Every breakable rule gets cases, each breaking exactly it; the others none ----------------------------
def breakable(coverage_reports, target: str, rule_id: str) -> bool:
    """What the coverage report (Z3's optimiser) says; the tests check generation agrees."""
    return next(r for r in coverage_reports[target] if r["id"] == rule_id)["breakable"]


@pytest.mark.parametrize("rule_id", tensormap_model.RULE_IDS)
def test_tensormap_rule_breaks_alone_by_spec_and_by_the_z3_model(rule_id, coverage_reports):
    arch, records = first_arch_with_cases("tensormap", rule_id)
    if not breakable(coverage_reports, "tensormap", rule_id):
        assert records == [], f"coverage calls {rule_id} tied but {arch} gives a case alone"
        return
    assert records, f"coverage calls {rule_id} breakable but no arch gives a case"
    for r in records:
        assert r["violates"] == [rule_id] and [x["id"] for x in r["rules"]] == [rule_id]
        assert tensormap_model.violated(r["case"], arch) == [rule_id]          # the independent model
        assert r["outcome"] in OUTCOMES and r["rules"][0]["source"]


@pytest.mark.parametrize("rule_id", desc_case_model.RULE_IDS)
def test_desc_rule_breaks_alone(rule_id, coverage_reports):
    arch, records = first_arch_with_cases("desc", rule_id)
    if not breakable(coverage_reports, "desc", rule_id):
        assert records == [], f"coverage calls {rule_id} tied but {arch} gives a case alone"
        return
    assert records, f"coverage calls {rule_id} breakable but no arch gives a case"
    for r in records:
        c = spec_desc_case.parse_case(r["case"], arch)
        assert [v.rule.id for v in spec_desc_case.violations(c)] == [rule_id]
        if rule_id.startswith("desc.tile."):
            # a tile rule broken alone misreads: the witness is confirmed by the read map itself
            assert r["outcome"] == "wrong-data"
            w = r["witness"]
            assert spec_desc_case.first_misread(c) == w and w["read_from"] != w["held_at"]


def test_unbreakable_rules_name_what_they_are_tied_to(coverage_reports):
    for target, rules in coverage_reports.items():
        for r in rules:
            if not r["breakable"]:
                assert r["tied_to"] or r.get("why"), r
                for other in r["tied_to"]:
                    records = generated(target, "sm103", {r["id"], other}, count=2)
                    records += generated(target, "sm90", {r["id"], other}, count=2)
                    if records:      # broken together they exist: each case breaks both
                        assert all(set(x["violates"]) == {r["id"], other} for x in records)


def test_some_desc_rules_are_tied(coverage_reports):
    """(test_desc_rule_breaks_alone checks that a tied rule has no case alone on any arch)"""
    assert [r["id"] for r in coverage_reports["desc"] if not r["breakable"]]


def test_rule_field_graph_links_rules_to_the_fields_they_read():
    graph = fuzz_coverage.rule_field_graph("tensormap")
    assert ("field", "boxDim") in graph[("rule", "tma.map.box_range")]
    assert ("field", "swizzle") in graph[("rule", "tma.map.box_swizzle_span")]
    desc = fuzz_coverage.rule_field_graph("desc")
    assert fuzz_coverage.shared_fields(desc, "desc.tile.stride_byte_offset", "desc.tile.leading_byte_offset")


# --- Valid cases, determinism, variety ---------------------------------------------------------------------
@pytest.mark.parametrize("target", ["tensormap", "desc"])
@pytest.mark.parametrize("arch", ARCHES)
def test_valid_cases_are_ok(target, arch):
    records = generated(target, arch, set(), count=30)
    assert len(records) == 30
    assert all(r["violates"] == [] and r["outcome"] == "ok" and r["witness"] is None for r in records)
    if target == "tensormap":
        assert all(tensormap_model.violated(r["case"], arch) == [] for r in records)


@pytest.mark.parametrize("target,rule", [("tensormap", "tma.map.box_range"), ("desc", "desc.tile.start_address"),
                                         ("tensormap", "tma.map.box_bytes_loaded")])      # Z3 under a budget
def test_same_seed_same_cases_and_no_duplicates(target, rule):
    """The command line, run twice in fresh processes, prints the same bytes for the same seed and other
    cases for another seed (test_same_seed_same_cases_in_one_process checks it within one process)."""
    def run(seed):
        command = [sys.executable, "-m", "layoutproof", "fuzz", "--target", target, "--arch", "sm90", "--violate", rule,
                   "--count", "40", "--seed", str(seed)]
        return subprocess.run(command, capture_output=True, text=True, check=True).stdout
    one, two, other = run(11), run(11), run(12)
    assert one == two and one != other
    texts = [json.dumps(json.loads(line)["case"], sort_keys=True) for line in one.splitlines()]
    assert len(texts) == 40 and len(set(texts)) == len(texts)


def test_cases_vary_in_kind_not_only_in_numbers():
    records = generated("tensormap", "sm100", {"tma.map.box_inner_16B"}, count=100)
    shapes = {(r["case"]["dataType"], r["case"]["swizzle"], r["case"]["rank"]) for r in records}
    assert len(shapes) >= 4
    desc = generated("desc", "sm90", set(), count=100)
    assert len({(r["case"]["dtype"], r["case"]["major"], r["case"]["layout"].split(" o ")[0]) for r in desc}) >= 4


# --- Outcomes against the evidence ---------------------------------------------------------------------------
def test_desc_outcomes_follow_ptxas_recording():
    """ptxas refuses the sm90 forms we label refused (tests/hardware/ptxas_forms.json): each refused desc
    case's (dtype, major, mn, k) form is recorded as not accepted, each ok case's as accepted."""
    import os
    path = os.path.join(TESTS_DIR, "hardware", "ptxas_forms.json")
    with open(path) as handle:
        forms = json.load(handle)
    table = {(f["arch"], f["dtype"], f["major"], f["mn"], f["k"]): f["accepted"] for f in forms["forms"]
             if f.get("kind") in (None, "")}
    checked = 0
    for rule in ("operand.sm90.dtype", "operand.mn_major.dtype", "operand.instruction_k", "operand.sm90.n_extent", None):
        for r in generated("desc", "sm90", {rule} if rule else set(), count=20):
            key = ("sm90", r["case"]["dtype"], r["case"]["major"], r["case"]["mn"], r["case"]["k"])
            if key in table:
                checked += 1
                assert table[key] == (r["outcome"] != "refused"), (key, r["violates"])
    assert checked >= 20


def test_smem_misalignment_witness_is_a_real_misplacement():
    from spec.tma import place as tma_place
    records = generated("tensormap", "sm90", {"tma.map.smem_alignment"}, count=30)
    wrong = [r for r in records if r["outcome"] == "wrong-data"]
    assert wrong
    for r in wrong:
        w = r["witness"]
        assert w["written_at"] != w["expected_at"]
        assert r["case"]["smemAddress"] % tma_place.tma_swizzle.repeat_boundary(r["case"]["swizzle"]) != 0


def test_smem_misalignment_witness_from_the_first_rows_is_the_whole_box_one():
    """misplaced_element places the first rows of a box before the whole box: the same witness."""
    from solver.fuzz import tensormap
    for arch in ("sm90", "sm100"):
        for r in generated("tensormap", arch, {"tma.map.smem_alignment"}, count=60, seed=11):
            assert tensormap.misplaced_element(r["case"]) == tensormap.misplaced_element_whole(r["case"])
    tiled = {"encode": "tiled", "dataType": "UINT8", "swizzle": "128B", "smemAddress": 0x480,
             "boxDim": [64, 4, 5], "elementStrides": [1, 1, 2]}
    for destination in (0x400, 0x480, 0x410, 0x2000, 0x3F0):
        for swizzle in ("32B", "64B", "128B"):
            doc = dict(tiled, smemAddress=destination, swizzle=swizzle,
                       boxDim=[{"32B": 32, "64B": 64, "128B": 128}[swizzle], 4, 5])
            assert tensormap.misplaced_element(doc) == tensormap.misplaced_element_whole(doc)


def test_tensormap_nonlinear_rule_under_a_bounded_budget():
    """box_bytes_loaded (products of floor / ceiling divisions): Z3 runs under a budget (rlimit, so
    deterministic), sampling fills in, spec labels every case, and the model and spec agree."""
    violate = {"tma.map.box_bytes_loaded"}
    records = generated("tensormap", "sm90", violate, count=300, seed=4)       # no disagreements
    assert len(records) == 300
    assert all(r["violates"] == ["tma.map.box_bytes_loaded"] for r in records)
    assert json.dumps(records) == json.dumps(generated("tensormap", "sm90", violate, count=300, seed=4))


def test_tensormap_problem_budget_says_undecided_not_unsat():
    from solver.fuzz import tensormap_sampling as model
    problem = model.Problem("tiled", "sm90", break_={"tma.map.box_bytes_loaded"}, budget=1)
    with pytest.raises(model.Undecided):
        problem.next(0)
    problem.set_budget(None)
    assert problem.next(0) is not None


# --- hypothesis strategies --------------------------------------------------------------------------------------
@settings(max_examples=25, deadline=None)
@given(strategies.tensor_maps(arch="sm90", violate=["tma.map.box_swizzle_span"], pool_size=40))
def test_strategy_tensor_maps(record):
    assert record["violates"] == ["tma.map.box_swizzle_span"] and record["outcome"] == "refused"


@settings(max_examples=25, deadline=None)
@given(strategies.descriptors(arch="sm100", pool_size=40), strategies.tile_layouts(arch="sm90", pool_size=40))
def test_strategy_descriptors_and_layouts(record, tile):
    assert record["outcome"] == "ok" and record["arch"] == "sm100"
    # the tile's keys, and since issue 29 what a descriptor builder takes: arch, kind, swizzle, shape, stride
    assert set(tile) == {"layout", "dtype", "major", "mn", "k", "start_address", "arch", "kind", "swizzle", "shape",
                         "stride"}


def test_strategy_for_an_impossible_request_says_so():
    with pytest.raises(ValueError, match="desc.sm100.fixed_bits"):      # when made (issue 29), not when drawn
        strategies.descriptors(arch="sm90", violate=["desc.sm100.fixed_bits"], pool_size=5)


# --- The command line ------------------------------------------------------------------------------------------
def run_cli(args, capsys):
    code = cli_main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_jsonl_lines_follow_the_contract(capsys):
    code, out, _ = run_cli(["fuzz", "--target", "tensormap", "--arch", "sm90", "--count", "3", "--seed", "5",
                            "--violate", "tma.map.global_address_alignment"], capsys)
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(lines) == 3
    for line in lines:
        assert {"target", "arch", "violates", "outcome", "witness", "case"} <= set(line)
        assert line["violates"] == ["tma.map.global_address_alignment"] and line["outcome"] == "refused"


def test_cli_bad_input_is_one_line_and_exit_2(capsys):
    for args in (["fuzz", "--target", "desc", "--arch", "sm90", "--violate", "no.such.rule"],
                 ["fuzz", "--target", "desc", "--arch", "sm90", "--count", "0"],
                 ["fuzz", "--target", "desc", "--arch", "sm90", "--count", "abc"],
                 ["fuzz", "--target", "desc", "--arch", "sm80"],
                 ["fuzz", "--target", "desc", "--arch", "sm90", "--format", "cuda"]):
        code, out, err = run_cli(args, capsys)
        assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, (args, err)


def test_cli_impossible_request_exits_1(capsys):
    code, out, err = run_cli(["fuzz", "--target", "desc", "--arch", "sm90", "--violate", "desc.sm100.fixed_bits"], capsys)
    assert code == 1 and out == "" and "coverage" in err


def test_cli_coverage_json(capsys):
    code, out, _ = run_cli(["fuzz", "--coverage", "--target", "desc", "--json"], capsys)
    rules = json.loads(out)["targets"]["desc"]["rules"]
    assert code == 0 and {r["id"] for r in rules} == set(desc_case_model.RULE_IDS)
    assert all({"id", "breakable", "tied_to"} <= set(r) for r in rules)


def test_cli_formats_write_files(tmp_path, capsys):
    code, _, _ = run_cli(["fuzz", "--target", "tensormap", "--arch", "sm90", "--count", "4", "--format", "cuda",
                          "--out", str(tmp_path / "tm")], capsys)
    assert code == 0 and "cuTensorMapEncode" in (tmp_path / "tm" / "fuzz_tensormap.cpp").read_text()
    assert len((tmp_path / "tm" / "cases.jsonl").read_text().splitlines()) == 4
    code, _, _ = run_cli(["fuzz", "--target", "desc", "--arch", "sm90", "--count", "3", "--format", "ptx",
                          "--out", str(tmp_path / "d")], capsys)
    assert code == 0 and "wgmma.mma_async" in (tmp_path / "d" / "fuzz_desc_sm_90a.ptx").read_text()


def test_cli_against_reports_exactly_the_differing_cases(tmp_path, capsys):
    # a stand-in checker that accepts everything: it differs from us on exactly the refused cases
    checker = tmp_path / "accept_all.py"
    checker.write_text("import sys, json\nfor line in sys.stdin:\n"
                       "    print(json.dumps({'verdict': 'accept', 'detail': 'stand-in'}), flush=True)\n")
    command = f"{sys.executable} {checker}"
    code, out, _ = run_cli(["fuzz", "--target", "tensormap", "--arch", "sm90", "--count", "5", "--violate", "tma.map.rank",
                            "--against", command, "--json"], capsys)
    document = json.loads(out)
    assert code == 1 and len(document["differences"]) == 5
    assert all(d["ours"] == "refuse" and d["theirs"] == "accept" for d in document["differences"])
    code, out, _ = run_cli(["fuzz", "--target", "tensormap", "--arch", "sm90", "--count", "5", "--valid", "--against", command,
                            "--json"], capsys)
    assert code == 0 and json.loads(out)["differences"] == []


def test_ptxas_adapter_against_desc_cases(capsys):
    """The shipped ptxas adapter agrees with our labels on generated sm90 desc cases (valid and refused)."""
    import shutil
    import os
    if shutil.which("ptxas") is None and os.environ.get("LAYOUTPROOF_NO_PTXAS") == "1":
        pytest.skip("LAYOUTPROOF_NO_PTXAS=1 and no ptxas")
    assert shutil.which("ptxas"), "ptxas not on PATH (set LAYOUTPROOF_NO_PTXAS=1 to skip)"
    for rule in ("--valid", "operand.instruction_k"):
        args = ["fuzz", "--target", "desc", "--arch", "sm90", "--count", "4", "--json", "--against",
                f"{sys.executable} -m solver.fuzz.adapters.ptxas"]
        args += ["--valid"] if rule == "--valid" else ["--violate", rule]
        code, out, _ = run_cli(args, capsys)
        assert code == 0 and json.loads(out)["differences"] == [], out[:500]


@pytest.mark.parametrize("target, arch, violate", [
    ("desc", "sm90", ()), ("desc", "sm100", ()), ("tensormap", "sm90", ("tma.map.box_range",)),
    ("recipe", "sm90", ()), ("tmem", "sm100", ()), ("tmem-alloc", "sm100", ()), ("triton-nvmma", "sm90", ()),
    ("cute-dsl", "sm90", ())])
def test_same_seed_same_cases_in_one_process(target, arch, violate):
    """A campaign's cases depend only on its arguments: not on what the process solved before (each
    Z3 problem solves in a context of its own, each generator draws from its own random state), so a
    second run, after another campaign and a coverage report (Z3 Optimize), is identical."""
    def campaign(seed):
        return json.dumps(list(fuzz.generate(target, arch, frozenset(violate), 3, seed=seed)))
    first = campaign(11)
    campaign(12)                       # other work in between
    fuzz_coverage.coverage_document(("tensormap",))
    assert campaign(11) == first


# --- streaming and bounds (issue 17) ---------------------------------------------------------------------

def test_cli_streams_each_case_as_it_is_made(monkeypatch):
    """jsonl goes out line by line: each write happens before the next case is asked for (a campaign of a
    million cases starts printing at once, and holds one case at a time)."""
    from solver.cli import fuzz as fuzz_cli
    pulled, seen_at_write = [], []

    def lazy(target, arch, violate, count, seed, stats=None):
        for index in range(count):
            pulled.append(index)
            yield {"index": index, "target": target, "case": {"n": index}}

    class Out:
        def write(self, text):
            seen_at_write.append(len(pulled))

        def flush(self):
            pass

    monkeypatch.setattr(fuzz_cli.fuzz, "generate", lazy)
    monkeypatch.setattr(sys, "stdout", Out())
    assert cli_main(["fuzz", "--target", "desc", "--arch", "sm90", "--count", "5"]) == 0
    assert seen_at_write == [1, 2, 3, 4, 5]


def test_cli_count_is_capped_before_any_work_and_a_bad_out_is_exit_2(capsys, monkeypatch, tmp_path):
    from solver.cli import fuzz as fuzz_cli

    def never(*args, **kwargs):
        raise AssertionError("generation started")
        yield

    monkeypatch.setattr(fuzz_cli.fuzz, "generate", never)
    for argv, limit in ((["--count", "1000000000"], fuzz_cli.MAX_COUNT),
                        (["--count", str(fuzz_cli.MAX_COUNT + 1), "--json"], fuzz_cli.MAX_COUNT)):
        assert cli_main(["fuzz", "--target", "desc", "--arch", "sm90"] + argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "--count" in err and str(limit) in err and len(err) < 300
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    assert cli_main(["fuzz", "--target", "desc", "--arch", "sm90", "--out", str(blocker / "sub")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--out" in err


def test_progress_shows_on_a_terminal_only():
    import io
    from solver.shell import Progress

    class Terminal(io.StringIO):
        def isatty(self):
            return True
    piped, terminal = io.StringIO(), Terminal()
    for stream in (piped, terminal):
        progress = Progress("fuzz desc", 3, "cases", stream=stream, every=0.0)
        for done in (1, 2, 3):
            progress.update(done)
        progress.close()
    assert piped.getvalue() == ""
    shown = terminal.getvalue()
    assert "fuzz desc: 1/3 cases" in shown and "3/3 cases" in shown and shown.endswith("\r\033[K")
