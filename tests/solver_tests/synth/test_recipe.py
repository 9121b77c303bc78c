"""Tile recipes: layout, TMA boxes, one descriptor per instruction, and the exhaustive check that TMA
writes what each descriptor reads (spec.tma.swizzle's tables against spec.mma.readmap, two independent
writings of the manual)."""
import pytest

from solver.synth import recipe
from spec.mma import descriptor
from spec.mma import dtypes
from spec.rules import SpecError

GRID = [(arch, dtype, major, swizzle)
        for arch in ("sm90", "sm100")
        for dtype in ("bf16", "tf32", "e4m3", "e2m1")
        for major in ("K", "MN")
        for swizzle in descriptor.swizzle_codes(arch)
        if not (arch == "sm90" and dtype == "e2m1")
        and (major == "K" and swizzle != "128B_atom32B"
             or major == "MN" and ((dtype == "bf16" and swizzle != "128B_atom32B")
                                   or (dtype == "e4m3" and arch == "sm100" and swizzle != "128B_atom32B")
                                   or (dtype == "tf32" and arch == "sm100" and swizzle == "128B_atom32B")))]


@pytest.mark.parametrize("case", GRID, ids=lambda c: "-".join(c))
def test_recipe_is_proved(case):
    arch, dtype, major, swizzle = case
    d = dtypes.dtype(dtype)
    kind = dtypes.default_kind(d)
    k_tile = 4 * dtypes.default_instruction_k(d, kind)
    r = recipe.build(arch, dtype, major, 128, k_tile, swizzle, 0x2000)
    assert r.violations == []
    assert r.proof["status"] == "proved" and r.proof["elements"] == 128 * k_tile
    assert len(r.instructions) == 4 and all(i["status"] == "found" for i in r.instructions)
    assert r.size_bytes == 128 * k_tile * d.bits // 8
    # every box fits the TMA rule: inner box bytes at most the swizzle span (cuTensorMapEncodeTiled)
    span = {"none": 16, "32B": 32, "64B": 64, "128B": 128, "128B_atom32B": 128}[swizzle]
    assert r.tma["box"][0] * d.bits // 8 == span


def test_cutlass_k_major_128b_recipe():
    """The tile CUTLASS uses most: descriptors step 32 bytes through the 128-byte row, SBO 1024."""
    r = recipe.build("sm90", "bf16", "K", 128, 64, "128B", 0x400)
    assert [i["fields"]["start_address"] for i in r.instructions] == [0x400, 0x420, 0x440, 0x460]
    assert {i["fields"]["stride_byte_offset"] for i in r.instructions} == {1024}
    assert r.layout.notation() == "Sw<3,4,3> o ((8,16),(64,1)):((64,512),(1,8192))"


@pytest.mark.parametrize("address, rule_id", [(0x480, "recipe.swizzle_alignment"),
                                              (0x410, "tma.box.destination_alignment")])
def test_misaligned_addresses_are_refused(address, rule_id):
    r = recipe.build("sm90", "bf16", "K", 128, 64, "128B", address)
    assert rule_id in [v.rule.id for v in r.violations] and not r.instructions


def test_unaligned_when_asked_is_consistent_with_base_offset_zero():
    """TMA and the descriptor both follow absolute addresses (PTX 5.5.7; H100 rule
    readmap.swizzle_phase), so with base offset 0 an unaligned tile still reads right."""
    r = recipe.build("sm90", "bf16", "K", 128, 64, "128B", 0x480, allow_unaligned=True)
    assert r.proof["status"] == "proved"
    assert {i["fields"]["base_offset"] for i in r.instructions} == {0}


def test_the_check_can_fail(monkeypatch):
    """If the TMA placed bytes relative to the box instead of by absolute address, the unaligned recipe
    would be refuted: the exhaustive check sees the difference."""
    from spec.tma import swizzle as tma_swizzle
    original = tma_swizzle.swizzle_byte_address
    monkeypatch.setattr(tma_swizzle, "swizzle_byte_address",
                        lambda mode, a: 0x480 + original(mode, a - 0x480))
    r = recipe.build("sm90", "bf16", "K", 128, 64, "128B", 0x480, allow_unaligned=True)
    assert r.proof["status"] == "refuted" and r.proof["written"] != r.proof["read"]


@pytest.mark.parametrize("kwargs, field", [
    (dict(mn=100), "mn"), (dict(k_tile=40), "k_tile"), (dict(swizzle="96B"), "swizzle"),
    (dict(dtype="e2m3"), "dtype"), (dict(smem_address=1 << 18), "smem_address")])
def test_bad_recipe_input(kwargs, field):
    args = dict(arch="sm90", dtype="bf16", major="K", mn=128, k_tile=64, swizzle="128B", smem_address=0x400)
    args.update(kwargs)
    if args["dtype"] == "e2m3":
        args["arch"] = "sm100"
    with pytest.raises(SpecError) as error:
        recipe.build(args["arch"], args["dtype"], args["major"], args["mn"], args["k_tile"], args["swizzle"],
                     args["smem_address"])
    assert error.value.field_name == field


def test_every_recipe_rule_is_broken_above():
    from spec.rules import rules_for
    assert {r.id for r in rules_for("recipe")} == {"recipe.swizzle_alignment", "tma.box.destination_alignment"}
