"""synth's direct path (solver.synth.descriptor._direct: the fields solved from the tile's addresses with
base offset 0, checked by spec on every element) against Z3's search: the same recipes (text and JSON
documents, refusals and errors alike) and the same synth outcomes, with the path on and off.

Z3's answers can depend on the queries a process made before (the order of an unsat core does), so each
run starts from a fresh Z3 context, as a fresh `layoutproof` process does."""
from __future__ import annotations

import itertools
import json
import subprocess
import sys

import pytest
import z3
from hypothesis import given, settings, strategies as st

from cute_tiles import CASES, spec_layout
from solver.cli import render
from solver.synth import descriptor as synth
from solver.synth import recipe
from spec.mma import dtypes, readmap
from spec.rules import SpecError

ARCHS = ("sm90", "sm100", "sm103")
DTYPES = ("bf16", "tf32", "e4m3", "s8", "e2m1")
SWIZZLES = ("none", "32B", "64B", "128B", "128B_atom32B")


def _fresh(monkeypatch, direct: bool) -> None:
    monkeypatch.setattr(z3.z3, "_main_ctx", None)       # the next query makes a new context
    monkeypatch.setattr(synth, "DIRECT", direct)


def _recipe_output(monkeypatch, direct: bool, args: tuple) -> str:
    """The recipe's JSON document and its text, or its one-line error."""
    _fresh(monkeypatch, direct)
    arch, dtype, major, mn, k_tile, swizzle, address, unaligned = args
    try:
        document = recipe.as_json(recipe.build(arch, dtype, major, mn, k_tile, swizzle, address,
                                               allow_unaligned=unaligned))
    except SpecError as error:
        return f"error: {error}"
    text = render.recipe_text(document)
    return json.dumps(document, sort_keys=True) + "\n" + text


def _same_recipe(monkeypatch, args: tuple) -> str:
    direct = _recipe_output(monkeypatch, True, args)
    assert direct == _recipe_output(monkeypatch, False, args), args
    return direct


# Every arch, type, major-ness and swizzle (the refused ones too); MN extents, K tiles and addresses
# (aligned, off the swizzle repeat, near the top of shared memory) taken in turn.
SHAPES = [(8, 32), (64, 64), (256, 128), (16, 96), (128, 256)]
ADDRESSES = [(0x400, False), (0x480, True), (0x3F000, False), (0x1080, False)]
GRID = [(arch, dtype, major, *SHAPES[i % len(SHAPES)], swizzle, *ADDRESSES[(i // 3) % len(ADDRESSES)])
        for i, (arch, dtype, major, swizzle) in enumerate(itertools.product(ARCHS, DTYPES, ("K", "MN"), SWIZZLES))]


@pytest.mark.parametrize("args", GRID, ids=lambda a: "-".join(map(str, a)))
def test_recipes_are_the_same_with_the_direct_path_on_and_off(args, monkeypatch):
    _same_recipe(monkeypatch, args)


def test_the_grid_reaches_the_direct_path_and_the_search(monkeypatch):
    """Both paths are exercised: recipes the direct path answers whole, and some it hands to Z3."""
    answered = []
    original = synth.solve_directly
    monkeypatch.setattr(synth, "solve_directly", lambda tile: answered.append(original(tile)) or answered[-1])
    for args in GRID[::7]:
        _same_recipe(monkeypatch, args)
    assert any(a is not None for a in answered) and any(a is None for a in answered)


@settings(max_examples=40, deadline=None)
@given(arch=st.sampled_from(ARCHS), dtype=st.sampled_from(DTYPES[:4]), major=st.sampled_from(("K", "MN")),
       mn=st.integers(1, 32).map(lambda g: 8 * g), steps=st.integers(1, 6), swizzle=st.sampled_from(SWIZZLES),
       address=st.integers(0, (1 << 14) - 1).map(lambda a: 16 * a), unaligned=st.booleans())
def test_random_recipes_are_the_same(arch, dtype, major, mn, steps, swizzle, address, unaligned):
    d = dtypes.dtype(dtype)
    k_tile = steps * (64 if swizzle in ("128B", "128B_atom32B") else 32) * 8 // d.bits
    with pytest.MonkeyPatch.context() as monkeypatch:
        _same_recipe(monkeypatch, (arch, dtype, major, mn, k_tile, swizzle, address, unaligned))


def _outcome(monkeypatch, direct: bool, tile) -> dict:
    _fresh(monkeypatch, direct)
    outcome = synth.synthesize(tile)
    return {"status": outcome.status, "descriptor": outcome.descriptor and outcome.descriptor.hex,
            "ignored": outcome.ignored, "reason": outcome.reason, "excluded": outcome.excluded}


@settings(max_examples=60, deadline=None)
@given(case=st.sampled_from(CASES), k_first=st.booleans(), block=st.integers(0, 7), wide=st.booleans(),
       start=st.integers(0, (1 << 13) - 1).map(lambda a: 16 * a))
def test_synth_outcomes_are_the_same(case, k_first, block, wide, start):
    """CuTe tiles (tests/cute_tiles.py) at any base address, any instruction K block, and K twice the
    instruction's (LBO then steps between swizzle atoms)."""
    arch, major, swizzle, dtype, mn, k_tile = case
    d = dtypes.dtype(dtype)
    k = dtypes.default_instruction_k(d, dtypes.default_kind(d)) * (2 if wide else 1)
    if k > k_tile:
        return
    tile = synth.make_tile(arch, dtype, major, mn, spec_layout(major, swizzle, dtype, mn, k_tile, k_first), start,
                           k=k, k_offset=(block * k) % k_tile)
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert _outcome(monkeypatch, True, tile) == _outcome(monkeypatch, False, tile)


def test_the_direct_answer_is_checked_on_every_element(monkeypatch):
    """An answer spec's read map refutes anywhere is not returned: Z3's search answers instead."""
    tile = synth.make_tile("sm90", "bf16", "K", 64, "Sw<3,4,3> o ((8,8),64):((64,512),1)", 0x400)
    assert synth.solve_directly(tile).descriptor.hex == "0x4000004000010040"
    monkeypatch.setattr(readmap, "first_misread", lambda op, expected, model="hardware": (63, 15))
    assert synth.solve_directly(tile) is None


def test_the_benchmark_recipe_makes_no_z3_query():
    """recipe 256x256 (benchmarks/bench_executors.py RECIPE): every descriptor from the direct path, z3
    not even imported."""
    code = ("import sys; from solver.synth import recipe; "
            "r = recipe.build('sm90', 'bf16', 'K', 256, 256, '128B', 0x400); "
            "print(r.proof['status'], len(r.instructions), 'z3' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["proved", "16", "False"]
