"""One spelling per thing, matched the way users write it (docs/CLI.md "Conventions"): every spelling of
an arch, a dtype or a swizzle prints exactly what the canonical one prints, in every command that
takes it; what is no spelling of anything is one line and exit 2 naming the option."""
from __future__ import annotations

import pytest

from solver.cli.main import main
from spec.mma import dtypes


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


DESC = ["desc", "addresses", "0x4000004000000040", "--major", "K", "--mn", "8", "--json"]
PLACE = ["tma", "place", "--elem-bytes", "2", "--box", "64,8", "--smem-address", "0x400", "--json"]


@pytest.mark.parametrize("arch", ["sm90", "SM90", "sm_90a", "Sm_90A"])
@pytest.mark.parametrize("dtype", ["bf16", "BF16", "bfloat16", "BFloat16"])
def test_arch_and_dtype_spellings_print_the_same(capsys, arch, dtype):
    canonical = run(capsys, *DESC, "--arch", "sm90", "--dtype", "bf16")
    assert run(capsys, *DESC, "--arch", arch, "--dtype", dtype) == canonical


@pytest.mark.parametrize("spelling, canonical", [("128b", "128B"), ("none", "NONE"), ("128B_atom32B", "128B_ATOM_32B"),
                                                ("128b_atom_32b", "128B_ATOM_32B"), ("64B", "64B")])
def test_tma_swizzle_spellings_print_the_same(capsys, spelling, canonical):
    assert run(capsys, *PLACE, "--swizzle", spelling) == run(capsys, *PLACE, "--swizzle", canonical)


def test_descriptor_swizzle_takes_the_tma_spelling(capsys):
    base = ["desc", "encode", "--arch", "sm100", "--start-address", "0x400", "--lbo", "16", "--sbo", "1024", "--json"]
    assert run(capsys, *base, "--swizzle", "128B_ATOM_32B") == run(capsys, *base, "--swizzle", "128B_atom32B")
    assert run(capsys, *base, "--swizzle", "NONE") == run(capsys, *base, "--swizzle", "none")


@pytest.mark.parametrize("argv, option", [
    (DESC + ["--arch", "sm80", "--dtype", "bf16"], "--arch"),
    (DESC + ["--arch", "sm90", "--dtype", "bfloat17"], "--dtype"),
    (PLACE + ["--swizzle", "129B"], "--swizzle"),
    (["tma", "check", "--params", "examples/tensormap_tiled_bf16.json"], "--arch"),
])
def test_no_spelling_is_one_line_exit_2_naming_the_option(capsys, argv, option):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and err.count("\n") == 1 and option in err


@pytest.mark.parametrize("alias, name", [("bfloat16", "bf16"), ("float16", "f16"), ("float32", "f32"),
                                         ("tfloat32", "tf32"), ("float8_e4m3fn", "e4m3"), ("float8_e5m2", "e5m2"),
                                         ("int8", "s8"), ("uint8", "u8"), ("E2M1", "e2m1")])
def test_dtype_aliases_are_the_table_types(alias, name):
    assert dtypes.canonical_name(alias) == name and dtypes.dtype(alias) is dtypes.DTYPES[name]
