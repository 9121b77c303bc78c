"""The solver commands through the command line: prove, synth, check, recipe (docs/CLI.md contract: --json
prints one document, exit 0/1/2, one-line errors)."""
import json
from repo_paths import ROOT  # noqa: E402  (tests/repo_paths.py)
import re
from pathlib import Path

import pytest

from solver.cli.main import main

TILE = ["--arch", "sm90", "--dtype", "bf16", "--major", "K", "--mn", "64",
        "--layout", "Sw<3,4,3> o ((8,8),64):((64,512),1)", "--start-address", "0x400"]


def run(capsys, *argv):
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_prove_json_contract(capsys):
    code, out, err = run(capsys, "prove", "k48", "--json", "--no-save")
    doc = json.loads(out)
    assert code == 0 and err == ""
    for r in doc["results"]:
        assert set(r) >= {"id", "statement", "status", "expected", "seconds", "counterexample"}
    assert {r["id"]: r["status"] for r in doc["results"]} == {"k48.contained": "proved", "k48.contiguous": "refuted",
                                                               "k48.split": "proved"}


def test_prove_list(capsys):
    code, out, _ = run(capsys, "prove", "--list", "--json")
    assert code == 0 and len(json.loads(out)["properties"]) > 80


@pytest.mark.parametrize("argv, field", [(["prove", "no.such.property"], "property"),
                                         (["prove", "k48", "--timeout", "0"], "timeout")])
def test_prove_bad_input(capsys, argv, field):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and field in err


def test_synth_found_json(capsys):
    code, out, _ = run(capsys, "synth", *TILE, "--k-offset", "16", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["status"] == "found"
    assert doc["fields"]["start_address"] == 0x420 and doc["descriptor"].startswith("0x") and doc["reason"] is None


def test_synth_none_exits_1_with_reason(capsys):
    argv = [a if a != "Sw<3,4,3> o ((8,8),64):((64,512),1)" else "(64,16):(16,1)" for a in TILE]
    code, out, _ = run(capsys, "synth", *argv, "--json")
    doc = json.loads(out)
    assert code == 1 and doc["status"] == "none" and doc["descriptor"] is None and "readmap." in doc["reason"]


def test_synth_all_lists_solutions(capsys):
    code, out, _ = run(capsys, "synth", *TILE, "--all", "--json")
    assert code == 0 and len(json.loads(out)["solutions"]) >= 2


def test_check_match_and_mismatch(capsys):
    code, out, _ = run(capsys, "check", "0x4000004000010040", *TILE, "--json")
    assert code == 0 and json.loads(out)["match"]
    code, out, _ = run(capsys, "check", "0x4000004000010040", *TILE, "--k-offset", "16", "--json")
    doc = json.loads(out)
    assert code == 1 and doc["mismatch"]["k"] == 16 and doc["fix"]["start_address"]["to"] == 0x420


def test_recipe_json_and_refusal(capsys):
    argv = ["recipe", "--arch", "sm90", "--dtype", "bf16", "--major", "K", "--mn", "128", "--k-tile", "64",
            "--swizzle", "128B"]
    code, out, _ = run(capsys, *argv, "--smem-address", "0x400", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["proof"]["status"] == "proved" and len(doc["instructions"]) == 4
    code, out, _ = run(capsys, *argv, "--smem-address", "0x480", "--json")
    doc = json.loads(out)
    assert code == 1 and doc["violations"][0]["rule"] == "recipe.swizzle_alignment"


@pytest.mark.parametrize("argv, field", [
    (["synth", *TILE[:-1], "0x401"], "start_address"),
    (["synth", *[a if a != "64" else "12" for a in TILE]], "mn"),
    (["synth", *[a if not a.startswith("Sw<") else "Sw<3,4 o (8" for a in TILE]], "layout"),
    (["recipe", "--arch", "sm90", "--dtype", "bf16", "--major", "K", "--mn", "128", "--k-tile", "40",
      "--swizzle", "128B", "--smem-address", "0"], "k_tile"),
])
def test_solver_commands_bad_input(capsys, argv, field):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and field in err
    assert "Traceback" not in err


# --- prove writes counterexamples only with --save -----------------------------------------------------


def _tree(folder: Path) -> dict:
    """Every file under folder: relative path -> (size, mtime)."""
    if not folder.exists():
        return {}
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize("flags", [[], ["--no-save"]], ids=["default", "no-save"])
def test_prove_without_save_writes_no_file(capsys, monkeypatch, tmp_path, flags):
    """k48.contiguous is refuted (docs/CLI.md example): a counterexample exists, and nothing is written, neither
    in the working directory nor in the repository's counterexamples/."""
    corpus = _tree(ROOT / "counterexamples")
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "prove", "k48.contiguous", "--json", *flags)
    result = json.loads(out)["results"][0]
    assert code == 0 and result["status"] == "refuted" and result["counterexample"]
    assert "saved_as" not in result
    assert list(tmp_path.iterdir()) == []
    assert _tree(ROOT / "counterexamples") == corpus


def test_prove_save_writes_the_counterexample_under_dir(capsys, monkeypatch, tmp_path):
    corpus = _tree(ROOT / "counterexamples")
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "prove", "k48", "--json", "--save", "saved")
    results = {r["id"]: r for r in json.loads(out)["results"]}
    assert code == 0 and "saved_as" not in results["k48.contained"]      # proved: nothing to save
    saved = Path(results["k48.contiguous"]["saved_as"])
    saved = saved if saved.is_absolute() else tmp_path / saved
    assert saved.is_file() and (tmp_path / "saved") in saved.parents
    assert json.loads(saved.read_text())["counterexample"] == results["k48.contiguous"]["counterexample"]
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == [saved]
    assert _tree(ROOT / "counterexamples") == corpus


# --- recipe text: the TMA loads are readable, not a Python dict ---------------------------------------
def test_recipe_text_names_each_load_by_its_coordinate(capsys):
    """128 x 128 bf16 K-major, 128B swizzle: a box is 64 elements of K (128 bytes) x 128 rows = 16 KiB, so
    two loads, at K = 0 and K = 64, landing at 0x400 and 0x400 + 16384 = 0x4400."""
    code, out, _ = run(capsys, "recipe", "--arch", "sm90", "--dtype", "bf16", "--major", "K", "--mn", "128",
                       "--k-tile", "128", "--swizzle", "128B", "--smem-address", "0x400")
    shown = "\n".join(line for line in out.splitlines() if not line.startswith("instruction: "))  # PTX has {...}
    assert code == 0 and "{" not in shown and "'" not in out
    assert re.search(r"\n0 +K=0 +0x400\n", out) and re.search(r"\n1 +K=64 +0x4400\n", out)


def test_prove_in_processes_gives_the_same_answers_and_saves_the_same_bytes(tmp_path):
    """prove_many over 2 forked processes: the statuses and counterexamples of one process, in order, and
    the same files under --save."""
    from solver.prove import prover
    from solver.prove.catalogue import all_properties
    chosen = [p for p in all_properties() if p.id.startswith(("k48", "alignment.phase", "base_offset.phase.128B"))]
    one = prover.prove_many(chosen, save_dir=str(tmp_path / "one"), jobs=1)
    two = prover.prove_many(chosen, save_dir=str(tmp_path / "two"), jobs=2)
    assert [(r.property.id, r.status, r.counterexample) for r in one] == \
        [(r.property.id, r.status, r.counterexample) for r in two]
    assert any(r.status == "refuted" for r in one)
    files = sorted(p.name for p in (tmp_path / "one").iterdir())
    assert files and files == sorted(p.name for p in (tmp_path / "two").iterdir())
    assert all((tmp_path / "one" / f).read_bytes() == (tmp_path / "two" / f).read_bytes() for f in files)


def test_check_exits_1_when_the_descriptor_reads_right_but_breaks_a_rule(capsys):
    """Issue 25 item 5: the descriptor (sm100, swizzle bits [61,64) = 0: none) reads this MN-major tf32 tile
    element by element, but PTX 9.7.16.10.3 Table 54 gives 32-bit MN-major operands only 128B_atom32B."""
    code, out, _ = run(capsys, "check", "0x00004020000807d8", "--arch", "sm100", "--dtype", "tf32", "--major", "MN",
                       "--mn", "8", "--k-offset", "24", "--layout", "((4,3),(8,4)):((1,128),(4,32))",
                       "--start-address", "0x7c00", "--json")
    doc = json.loads(out)
    assert doc["match"] is True
    assert "operand.swizzle.table54" in [v["rule"] for v in doc["violations"]]
    assert code == 1


RECIPE_SM100 = ["recipe", "--arch", "sm100", "--dtype", "bf16", "--major", "K", "--mn", "128", "--k-tile", "64",
                "--swizzle", "128B", "--smem-address", "0x400"]


def test_recipe_instr_n_zero_breaks_the_n_rule_not_the_m_rule(capsys):
    """N = 0 is encodable (the field holds N >> 3, PTX 9.7.16.4.2 Table 44) and Table 39 lists no such
    shape: a violation of mma.shape.n (exit 1), not malformed input blamed on mma.shape.m."""
    code, out, _ = run(capsys, *RECIPE_SM100, "--instr", "128,0", "--json")
    assert code == 1
    assert [v["rule"] for v in json.loads(out)["instr_desc"]["violations"]] == ["mma.shape.n"]
    code, out, _ = run(capsys, *RECIPE_SM100, "--instr", "0,64", "--json")
    assert code == 1
    assert [v["rule"] for v in json.loads(out)["instr_desc"]["violations"]] == ["mma.shape.m"]


def test_recipe_instr_negative_n_is_malformed_and_names_n(capsys):
    code, _, err = run(capsys, *RECIPE_SM100, "--instr", "128,-8")
    assert code == 2 and err.startswith("layoutproof: error: recipe: n=-8") and err.count("\n") == 1
