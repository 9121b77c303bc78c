"""Scopes (solver/kernel/frontend/scope.py): each { } block's own registers and labels get names of their own
(PTX ISA 9.0 4.4, 5.1.1), and a text none of whose names a block declares is left as it is without being
rewritten (_Names.may_resolve: a prefilter that must never miss a name resolve() renames)."""
from __future__ import annotations

import json
import lzma

from hypothesis import given, settings
from hypothesis import strategies as st

from repo_paths import TESTS
from solver.kernel.frontend import scope, source

WAITS = """.version 8.7
.target sm_90a
.address_size 64
.visible .entry k()
{
.reg .b32 %r<4>;
.reg .pred %p<2>;
mov.u32 %r1, 0;
{ .reg .pred P1; LAB_WAIT: mbarrier.try_wait.parity.shared::cta.b64 P1, [%r1], %r2; @P1 bra DONE; bra LAB_WAIT; DONE: }
{ .reg .pred P1; .reg .b32 %t<2>; LAB_WAIT: mbarrier.try_wait.parity.shared::cta.b64 P1, [%r1], %r2; add.s32 %t1, %r1, 1; @P1 bra DONE; bra LAB_WAIT; DONE: }
ret;
}
"""


def test_each_block_has_names_of_its_own():
    statements = source.parse(WAITS).functions[0].statements
    texts = [s.text for s in statements if s.instruction is not None]
    waits = [t for t in texts if t.startswith("mbarrier")]
    assert len(waits) == 2 and waits[0] != waits[1]               # each block's own P1
    assert all("%r1" in w and "%r2" in w for w in waits)         # the function's registers, as they are
    assert any(t.startswith("add.s32 %t") and "$" in t.split(",")[0] for t in texts)   # %t1 of its block
    assert "mov.u32 %r1, 0" in texts                             # outside every block: not rewritten
    labels = [s.label for s in statements if s.label is not None]
    assert len(labels) == len(set(labels)) == 4


_NAMES = st.sampled_from(["P1", "%p1", "%r1", "%r12", "%t", "%t0", "%t7", "LAB", "DONE", "x", "%rd3", "%rd"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.dictionaries(_NAMES, _NAMES, max_size=3),
                          st.dictionaries(st.sampled_from(["%t", "%rd", "%q"]), st.integers(1, 9), max_size=2)),
                min_size=1, max_size=3),
       st.lists(_NAMES, min_size=1, max_size=4))
def test_the_prefilter_never_misses_a_name_that_resolves(chain, words):
    names = None
    for exact, ranged in chain:
        names = scope._Names(names, {k: k + "$$1" for k in exact}, {k: (k + "$$1_", n) for k, n in ranged.items()})
    text = ", ".join(words)
    if any(names.resolve(w) is not None for w in words):
        assert names.may_resolve(text)
    if not names.may_resolve(text):
        assert scope._NAME.sub(lambda m: names.resolve(m.group(0)) or m.group(0), text) == text


def test_the_corpus_reads_the_same_with_and_without_the_prefilter(monkeypatch):
    """The CuTe DSL and CUTLASS kernels (inline-asm blocks and DSL waits in every loop): the statements are
    the same whether every text is rewritten or only those the prefilter passes."""
    texts = []
    for compiler in ("cutedsl", "cutlass"):
        folder = TESTS / "fixtures" / "ptx" / "corpus" / compiler
        entries = json.loads((folder / "manifest.json").read_text())["kernels"][:3]
        texts += [lzma.open(folder / e["file"], "rt").read() for e in entries]

    def statements():
        return [[(s.line, s.text, s.label, s.instruction) for f in source.parse(t).functions for s in f.statements]
                for t in texts]
    filtered = statements()
    monkeypatch.setattr(scope._Names, "may_resolve", lambda self, text: True)
    assert statements() == filtered
