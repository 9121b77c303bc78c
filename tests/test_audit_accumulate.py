"""Where an accumulation starts (solver/kernel/audit/accumulate.py): zeros, or constants (a mask: -inf or
0, whatever the predicate picks, PTX ISA 9.0 9.7.8.1 selp), written into every register of a wgmma
accumulator hold no earlier sum; anything else (a loaded value, a partial write) leaves the start unknown."""
from __future__ import annotations

import pytest

from solver.kernel.audit import accumulate
from solver.kernel.frontend.instruction import parse_instruction


def _ins(text: str):
    return parse_instruction(1, text.rstrip(";"))


@pytest.mark.parametrize("text, constant", [
    ("selp.f32 %f1, 0fFF800000, 0f00000000, %p1;", True),
    ("mov.f32 %f1, 0f3F800000;", True),
    ("mov.b32 %r1, 7;", True),
    ("selp.f32 %f1, %f9, 0f00000000, %p1;", False),         # one side a register: any value
    ("mov.f32 %f1, %f2;", False),
    ("add.f32 %f1, %f1, 0f00000000;", False),
])
def test_a_constant_write_is_a_mov_or_a_selp_of_two_constants(text, constant):
    assert accumulate.writes_constant(_ins(text)) is constant


def test_a_mask_and_its_copies_are_constants_and_a_load_is_not():
    accumulations = accumulate.Accumulations(None, None)
    accumulations.marker(0, _ins("selp.f32 %f1, 0fFF800000, 0f00000000, %p1;"))
    accumulations.marker(0, _ins("mov.f32 %f2, %f1;"))                 # a copy of a constant
    assert accumulations.written[0] == {"%f1": "constant", "%f2": "constant"}
    accumulations.marker(0, _ins("ld.shared.f32 %f3, [%r1];"))
    assert accumulations.written[0]["%f3"] == "other"


def _site(m, n):
    from types import SimpleNamespace
    return SimpleNamespace(m=m, n=n, cta_group=1, ws=False, sparse=False)


@pytest.mark.parametrize("stored, expected", [
    (frozenset(), False),
    (frozenset({64 + 127}), True),          # the last column of an M = 128, N = 128 accumulator at column 64
    (frozenset({63, 64 + 128}), False),     # just outside it on both sides
    (accumulate.EVERY_COLUMN, True),        # a store of cells the run does not know
])
def test_a_tensor_memory_accumulator_a_store_writes_over_is_not_summed(stored, expected):
    # M = 128, .cta_group::1: D[m][n] at lane m, column n (PTX ISA 9.0 9.7.16.10.5, data-path layout D)
    accumulations = accumulate.Accumulations(None, None, stored)
    assert accumulations._stored_over(64, _site(128, 128)) is expected
