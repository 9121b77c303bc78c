"""spec.ptx_operands.split_operands, the one operand splitter of the spec (tcgen05 forms) and of the kernel
reader, against PTX ISA 9.0 4.4's statement shape: commas separate operands, except inside a vector {},
an address [] or a call's parameter list ()."""
from __future__ import annotations

import pytest

from spec.ptx_operands import split_operands
from solver.kernel.frontend import instruction as kernel_instruction
from spec.tmem import instruction as tmem_instruction


@pytest.mark.parametrize("text, expected", [
    ("", ()),
    ("   ", ()),
    ("%r1", ("%r1",)),
    ("%r1, %r2, 16", ("%r1", "%r2", "16")),
    ("{%f1, %f2, %f3}, %rd4, %rd5, 1, 1, 1, 1", ("{%f1, %f2, %f3}", "%rd4", "%rd5", "1", "1", "1", "1")),
    ("[%r4+128], {%r1, %r2}", ("[%r4+128]", "{%r1, %r2}")),
    ("(%r2), f, (%rd1, %r3)", ("(%r2)", "f", "(%rd1, %r3)")),
    ("[%rd1, {%r1, %r2}], [%r9]", ("[%rd1, {%r1, %r2}]", "[%r9]")),
    ("%r1, %r2,", ("%r1", "%r2", "")),          # a stray comma is an empty operand, for the binder to refuse
    (",", ("", "")),
])
def test_split_operands(text, expected):
    assert split_operands(text) == expected


def test_the_kernel_reader_and_the_tmem_spec_use_the_same_splitter():
    assert kernel_instruction.split_operands is split_operands
    assert tmem_instruction.split_operands is split_operands


def test_the_tmem_binding_refuses_a_stray_comma():
    from spec.rule import SpecError
    with pytest.raises(SpecError):
        tmem_instruction.parse("tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r1}, [%r2],;")
