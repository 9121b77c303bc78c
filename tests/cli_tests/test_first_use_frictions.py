"""The ten frictions a new user met (issue 29), each replayed as the user met it, and found gone.

Each test repeats what the user did (the command line, the import, the document read) and checks the
answer a kernel engineer needs on the first try. The deeper checks live beside the code they test
(test_vocabulary, test_api_commands, test_recipe_mma, test_public_strategies, test_startup,
test_picture_budget, test_help_examples); this file is the issue's list, in its order.
"""
from __future__ import annotations

import io
from repo_paths import ROOT_DIR  # noqa: E402  (tests/repo_paths.py)
import json
import os
import re
from contextlib import redirect_stderr, redirect_stdout

import pytest

import layoutproof as lp
from solver.cli.main import main

ROOT = ROOT_DIR
TILE = "Sw<3,4,3> o ((8,8),64):((64,512),1)"


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(list(argv))
    return status, out.getvalue(), err.getvalue()


# 1. A silent wrong answer: a descriptor pasted without 0x was read as decimal.
def test_1_a_word_without_0x_is_not_read_as_decimal():
    status, out, err = run("desc", "decode", "--arch", "sm90", "4000004000010040")
    assert status == 2 and out == ""
    assert "0x4000004000010040" in err and "write 0x" in err       # both readings shown, the fix named


# 2. The README's hypothesis example failed a correct builder; a "valid" tile overlapped itself.
def test_2_strategies_are_public_and_compare_what_the_mma_reads():
    from layoutproof import strategies
    tile = {"arch": "sm90", "dtype": "bf16", "major": "K", "mn": 64, "k": 16}
    # K-major 128B, K = 16 inside one 64-element atom: LBO is not read (PTX 9.7.15.5.1), so these agree
    assert strategies.same_reads(0x4000004000010040, 0x4000004000400040, tile)
    assert lp.same_reads(0x4000004000010040, 0x4000004000400040, tile)
    with pytest.raises(AssertionError, match=r"element \(mn=8, k=0\)"):     # SBO 512 vs 1024: row 8 moves
        strategies.assert_same_reads(0x4000004000010040, 0x4000002000010040, tile)
    assert os.path.exists(os.path.join(ROOT, "examples", "hypothesis_builder_test.py"))
    with open(os.path.join(ROOT, "README.md")) as handle:
        assert "from solver.fuzz import strategies as lp" not in handle.read()


def test_2_the_overlapping_tile_is_refuted_and_not_drawn_as_valid():
    status, out, _ = run("prove", "--layout", "((8,25),(16,2)):((16,128),(1,32))", "--dtype", "e4m3", "injective")
    assert status == 1 and out.startswith("refuted")


# 3. recipe on sm90 ignored how wgmma reads: one descriptor set, no second warpgroup, no instruction.
def test_3_an_sm90_recipe_gives_each_warpgroup_and_the_instruction():
    status, out, _ = run("recipe", "--arch", "sm90", "--dtype", "bf16", "--major", "K", "--mn", "128", "--k-tile", "64",
                         "--swizzle", "128B", "--smem-address", "0x400", "--instr", "128,128", "--json")
    document = json.loads(out)
    assert status == 0
    assert document["mma"]["instruction"].startswith("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16")
    a = [s for s in document["mma"]["slices"] if s["operand"] == "A"]
    assert [s["rows"] for s in a] == [[0, 63], [64, 127]]
    assert int(a[1]["descriptors"][0], 16) - int(a[0]["descriptors"][0], 16) == (64 * 128) >> 4
    status, out, _ = run("recipe", "--arch", "sm90", "--dtype", "bf16", "--major", "K", "--mn", "128", "--k-tile", "64",
                         "--swizzle", "128B", "--smem-address", "0x400", "--emit", "cuda")
    assert status == 0 and "cuTensorMapEncodeTiled" in out


# 4. Examples that do not run: fuzz --help without --arch; a header naming a missing file; --out silent.
def test_4_fuzz_examples_name_the_arch_and_out_says_what_it_wrote(tmp_path):
    from test_help_examples import EXAMPLES
    fuzz = [line for command, line, _ in EXAMPLES if command == "fuzz" and "--coverage" not in line]
    assert fuzz and all("--arch" in line for line in fuzz)
    status, out, _ = run("fuzz", "--target", "tensormap", "--arch", "sm90", "--count", "2", "--seed", "1",
                         "--format", "cuda", "--out", str(tmp_path))
    assert status == 0 and re.search(r"wrote .* \(2 cases\)", out)
    program = [name for name in os.listdir(tmp_path) if name.endswith(".cpp")]
    with open(tmp_path / program[0]) as handle:
        assert program[0] in handle.read()          # the header names the file it is in


# 5. Pictures that took 50 s and 310 MB: bounded, summarised past a readable size (test_picture_budget).
def test_5_the_largest_recipe_picture_is_bounded(tmp_path):
    status, _, err = run("recipe", "--arch", "sm90", "--dtype", "bf16", "--major", "K", "--mn", "256", "--k-tile", "256",
                         "--swizzle", "128B", "--smem-address", "0x400", "--svg", str(tmp_path / "r.svg"))
    assert status == 0, err
    assert os.path.getsize(tmp_path / "r.svg") < 20 * 1024 * 1024


# 6. Four names for one thing, no "did you mean", three error formats, --major k naming the wrong rule.
@pytest.mark.parametrize("argv", [
    ["synth", "--arch", "sm90", "--dtype", "bf16", "--major", "K", "--mn", "64", "--layout", TILE,
     "--smem-address", "0x400"],
    ["tma", "place", "--swizzle", "128B", "--dtype", "bf16", "--box", "64,8", "--smem-address", "0x400"],
    ["tmem", "plan", "--arch", "sm100", "--m", "128", "--n", "64", "--dtype", "f32"],
    ["tmem", "map", "--arch", "sm100", "--op", "ld", "--shape", "32x32b", "--num", "x1"],
    ["recipe", "--arch", "sm90", "--dtype", "bf16", "--major", "k", "--mn", "64", "--k-tile", "64", "--swizzle", "128B",
     "--smem-address", "0x400"],
])
def test_6_one_vocabulary(argv):
    status, out, err = run(*argv, "--pretty")
    assert status == 0, err
    assert json.loads(out) and out.count("\n") > 3


def test_6_one_error_format_with_did_you_mean():
    lines = [run("recipe", "--arch", "sm90", "--dtyp", "bf16")[2], run("recipe", "--arch", "sm90", "--major", "kk")[2],
             run("desc", "decode", "--arch", "sm90", "0xg")[2], run("nosuch")[2]]
    assert all(line.startswith("layoutproof: error: ") and line.count("\n") == 1 for line in lines), lines
    status, _, err = run("recipe", "--arch", "sm90", "--dtype", "bf16", "--major", "X", "--mn", "64", "--k-tile", "64",
                         "--swizzle", "128B", "--smem-address", "0x400")
    assert status == 2 and "operand.mn_extent" not in err


# 7. The Python API covered 10 of 24 commands; a decimal repr; an arch guessed; `annotations` in dir(lp).
def test_7_every_command_is_a_function_with_typed_results():
    from layoutproof import commands
    result = commands.tma_place(swizzle="128B", dtype="bf16", box=(64, 8), smem_address=0x400)
    assert result.ok and result.offsets[0] == 0x400 and result.to_json()["offsets"] == result.offsets
    assert "0x4000004000010040" in repr(lp.decode("sm90", 0x4000004000010040))
    with pytest.raises(TypeError):
        lp.check_tensor_map({"encode": "tiled"})         # no default arch
    assert "annotations" not in dir(lp)


# 8. A refuted proof opened with the claim; CuTe-illegal swizzles were accepted without a word.
def test_8_refuted_on_the_first_line_and_cute_swizzles_refused():
    status, out, _ = run("prove", "--layout", "(64,64):(72,1)", "--dtype", "bf16", "inside", "--k-slice", "16")
    assert status == 1 and out.splitlines()[0].startswith("refuted: ")
    for argv in (["prove", "--layout", "Sw<1,0,0> o (64,64):(64,1)", "injective"],
                 ["synth", "--arch", "sm90", "--dtype", "bf16", "--major", "K", "--mn", "64", "--layout",
                  "Sw<1,0,0> o (64,64):(64,1)", "--smem-address", "0x400"]):
        status, _, err = run(*argv)
        assert status == 2 and "swizzle.cute.domain" in err


# 9. Nothing taught the model; a 604-line README.
def test_9_docs_that_teach():
    with open(os.path.join(ROOT, "README.md")) as handle:
        readme = handle.read()
    assert readme.count("\n") <= 160
    for document in ("GUIDE.md", "TUTORIALS.md", "CLI.md", "EVIDENCE.md"):
        assert f"docs/{document}" in readme and os.path.exists(os.path.join(ROOT, "docs", document))
    with open(os.path.join(ROOT, "docs", "TUTORIALS.md")) as handle:
        assert handle.read().count("$ layoutproof ") >= 12


# 10. Start-up; a plan past the register file without a word.
def test_10_a_plan_past_the_register_file_says_so():
    status, out, _ = run("tmem", "plan", "--m", "128", "--n", "256", "--dtype", "f32")
    assert status == 0 and "past the 255 a thread has" in out


def test_a_missing_file_is_an_error_unless_it_names_a_bundled_example(tmp_path, monkeypatch):
    """After pip install, examples/NAME.json and NAME find the bundled copy; any other missing path is
    refused, never read as the example of the same name."""
    monkeypatch.chdir(tmp_path)
    assert run("tma", "check", "--tensormap", "examples/tensormap_tiled_bf16.json", "--arch", "sm90")[0] == 1
    status, _, err = run("tma", "check", "--tensormap", "mine/tensormap_tiled_bf16.json", "--arch", "sm90")
    assert status == 2 and "cannot read" in err
