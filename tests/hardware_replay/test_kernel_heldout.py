"""Issue 26's held-out check, replayed: 30 real kernels the reader was not built on
(tests/fixtures/ptx/heldout/README.md). Each is read whole, every operand descriptor is known without a
parameter, and no rule is reported broken (they are production kernels that compute the right result).
"""
from __future__ import annotations

import json
from repo_paths import TESTS  # noqa: E402  (tests/repo_paths.py)
import lzma

import pytest

from solver.cli.ptx import descriptors_document
from solver.kernel import analysis

from tests.solver_tests.kernel.test_kernel_corpus import plain_count

HELDOUT = TESTS / "fixtures" / "ptx" / "heldout"
KERNELS = json.loads((HELDOUT / "manifest.json").read_text())["kernels"]


def test_the_held_out_set_spans_the_compilers():
    assert len(KERNELS) == 30
    assert {k["compiler"] for k in KERNELS} == {"triton", "cutedsl", "tilelang", "cutlass"}


@pytest.mark.parametrize("entry", KERNELS, ids=[k["file"].split(".")[0] for k in KERNELS])
def test_held_out_kernel(entry):
    text = lzma.open(HELDOUT / entry["file"], "rt").read()
    result = analysis.analyse(text)
    assert result.unread == [] and result.module.unread == []
    assert len(result.sites) + len(result.others) == plain_count(text)
    document = descriptors_document(result, with_addresses=False)
    unknown = [(site["line"], role) for site in document["sites"] for role, op in site["operands"].items()
               if op["source"] == "descriptor" and not op["known"]]
    assert unknown == []
    assert [v for site in document["sites"] for v in site["violations"]] == []


def test_a_rule_broken_only_by_an_any_launch_value_is_a_possibility(tmp_path, capsys):
    """quack's ping-pong kernel with an M-major A starts its second warpgroup at stage k % 6, which the
    any-launch sets take as -5..5: the negative stages wrap the descriptor's start address into its
    reserved bits. No launch has a negative k, so that is listed as possible and the exit status is 0."""
    from solver.cli.main import main
    entry = next(k for k in KERNELS if k["file"].startswith("cutedsl__quack_sm90_pingpong_bf16_128x128_amn"))
    path = tmp_path / "kernel.ptx"
    path.write_text(lzma.open(HELDOUT / entry["file"], "rt").read())
    rc = main(["ptx", "descriptors", str(path), "--json"])
    document = json.loads(capsys.readouterr().out)
    possible = [v for site in document["sites"] for v in site["possible_violations"]]
    assert rc == 0 and [v for site in document["sites"] for v in site["violations"]] == []
    assert possible and {v["rule"] for v in possible} == {"desc.sm90.unused_bits_zero"}
    rc = main(["ptx", "descriptors", str(path)])
    assert rc == 0 and "possible, for some launch" in capsys.readouterr().out
