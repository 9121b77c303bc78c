"""Nothing silent on foreign input (issue 26, its first part): every MMA opcode in a PTX file is a site of
`ptx descriptors`, or is listed under `unread` with its line and reason (exit 1). The count the tests
compare with is a plain count of the opcodes in the text, comments removed, written here apart from the
reader. FlashAttention-4's sm100 kernels guard their MMAs with predicates named without '%'
(`@leader_thread tcgen05.mma ...`, legal PTX: ISA 4.3 identifiers); they were dropped silently."""
from __future__ import annotations

import io
from repo_paths import TESTS  # noqa: E402  (tests/repo_paths.py)
import json
import re

import pytest

from solver.cli.main import main
from solver.kernel import analysis
from solver.kernel.frontend import scope

FIXTURES = TESTS / "fixtures" / "ptx"
OPCODE = re.compile(r"(wgmma\.mma_async|tcgen05\.mma)(?![\w$])")


def plain_count(text: str) -> int:
    """The MMA opcodes of the text outside // and /* */ comments."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return len(OPCODE.findall(text))


def descriptors(capsys, monkeypatch, text: str) -> tuple:
    capsys.readouterr()
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    rc = main(["ptx", "descriptors", "-", "--json"])
    out, err = capsys.readouterr()
    return rc, json.loads(out) if out else None, err


def with_named_guards(text: str) -> str:
    """handwritten_tcgen05.ptx with its first two MMAs guarded by a predicate named without '%'."""
    text = text.replace("\t.reg .pred \t%p<4>;\n", "\t.reg .pred \t%p<4>;\n\t.reg .pred \tleader_thread;\n", 1)
    first = "\ttcgen05.mma.cta_group::1.kind::f16 [%r10], %rd1, %rd2, %r20, %p1;"
    second = "\ttcgen05.mma.cta_group::1.kind::f16 [%r10], [%r11], %rd2, %r20, %p1;"
    assert first in text and second in text
    return (text.replace(first, "\t@leader_thread " + first[1:], 1)
                .replace(second, "\t@!leader_thread " + second[1:], 1))


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.ptx")), ids=lambda p: p.name)
def test_every_mma_of_every_fixture_is_a_site(path):
    text = path.read_text()
    result = analysis.analyse(text)
    assert result.unread == []
    assert len(result.sites) == plain_count(text)


def test_an_mma_guarded_by_a_predicate_named_without_percent_is_a_site(capsys, monkeypatch):
    text = with_named_guards((FIXTURES / "handwritten_tcgen05.ptx").read_text())
    rc, document, err = descriptors(capsys, monkeypatch, text)
    assert err == "" and document["unread"] == []
    assert len(document["sites"]) == plain_count(text) == 6
    assert [s["guard"] for s in document["sites"][:2]] == ["leader_thread", "leader_thread"]


def test_an_mma_the_reader_misses_is_listed_unread_and_exits_1(capsys, monkeypatch):
    """The safety net itself: a front end that loses the statements guarded by a name without '%' (as the
    line reader before the grammar did) must not lose them silently: they are listed, with their lines."""
    flatten = scope.flatten

    def losing(body, marker):
        return [s for s in flatten(body, marker) if s.instruction is None or s.instruction.guard != "leader_thread"]

    monkeypatch.setattr(scope, "flatten", losing)
    text = with_named_guards((FIXTURES / "handwritten_tcgen05.ptx").read_text())
    rc, document, err = descriptors(capsys, monkeypatch, text)
    assert rc == 1
    assert len(document["sites"]) + len(document["unread"]) == plain_count(text)
    lines = [n + 1 for n, line in enumerate(text.splitlines()) if "leader_thread tcgen05" in line]
    assert [u["line"] for u in document["unread"]] == lines
    assert all("leader_thread" in u["text"] and u["reason"] for u in document["unread"])


def test_unread_names_an_mma_outside_every_function_and_ignores_comments():
    text = ("// tcgen05.mma in a comment\n/* wgmma.mma_async\n */\n.version 8.7\n.target sm_100a\n"
            ".address_size 64\ntcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2, %p1;\n")
    result = analysis.analyse(text)
    assert result.sites == []
    assert [u["line"] for u in result.unread] == [7]      # the grammar reads no instruction outside a body
    assert "does not expect 'tcgen05.mma.cta_group::1.kind::f16'" in result.unread[0]["reason"]


def test_a_site_accounts_for_one_opcode_only():
    """An opcode past a function's last statement (here an MMA) is not taken as read by that statement."""
    text = (".version 8.7\n.target sm_100a\n.address_size 64\n.visible .entry k()\n{\n.reg .b64 %rd<3>;\n"
            ".reg .b32 %r<3>;\n.reg .pred %p<2>;\n"
            "tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2, %p1;\n}\n"
            "tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd2, %r2, %p1;\n")
    result = analysis.analyse(text)
    assert len(result.sites) == 1
    assert [u["line"] for u in result.unread] == [11]
