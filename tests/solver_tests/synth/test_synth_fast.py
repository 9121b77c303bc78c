"""synth's shortcut in ignored_fields (another field value that leaves the operand's read-map parts as they
are reads every element alike, so it is not checked again element by element) against the plain check of
every element: the same descriptors, the same ignored fields, over recipes of every arch, major, swizzle
and element size, one row group (SBO unused) or many, one K step or several."""
from __future__ import annotations

import pytest

from solver.synth import descriptor as synth
from solver.synth import recipe

RECIPES = [(arch, dtype, major, mn, k_tile, swizzle)
           for arch in ("sm90", "sm100")
           for dtype, major, swizzle in (("bf16", "K", "128B"), ("bf16", "K", "none"), ("bf16", "MN", "64B"),
                                         ("e4m3", "K", "32B"), ("tf32", "K", "64B"), ("bf16", "MN", "none"),
                                         ("tf32", "MN", "128B_atom32B"))
           if not (arch == "sm90" and (swizzle == "128B_atom32B" or (major == "MN" and dtype != "bf16")))
           for mn, k_tile in (((8, 64), (64, 64)) if major == "K" else ((64, 32), (128, 64)))]


def _instructions(args) -> list:
    arch, dtype, major, mn, k_tile, swizzle = args
    return recipe.as_json(recipe.build(arch, dtype, major, mn, k_tile, swizzle, 0x400))["instructions"]


@pytest.mark.parametrize("args", RECIPES, ids=lambda a: "-".join(map(str, a)))
def test_ignored_fields_by_read_map_parts_are_the_element_check(args, monkeypatch):
    fast = _instructions(args)
    assert fast and all(i["status"] == "found" for i in fast)
    from spec import fast as fast_paths
    monkeypatch.setattr(fast_paths, "ENABLED", False)         # every fast path off: every value checked
    assert _instructions(args) == fast
