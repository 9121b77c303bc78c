"""Box synthesis (solver/synth/box.py). Expectations worked out by hand from the CUDA Driver API's
cuTensorMapEncodeTiled and PTX 5.5.7: a box row is W bytes (the swizzle span: 32/64/128; 16 with no
swizzle), boxDim[i] <= 256, rows W apart; the widest span that tiles the tile's inner extent wins
because it moves the most bytes per load."""
from __future__ import annotations

import pytest

from solver.synth import box as box_synth
from solver.synth import recipe
from solver.model import tensormap as tm

TENSOR = ([4096, 4096], [8192])          # a bf16 4096 x 4096 row-major matrix (rows 8192 bytes apart)


@pytest.mark.parametrize("dtype,rows,inner,tensor,swizzle,box,loads", [
    # bf16 128 x 64: 64 elements = 128 bytes = the 128B span; 128 rows <= 256: one load of 16 KiB
    ("bf16", 128, 64, TENSOR, "128B", [64, 128], 1),
    # bf16 256 x 128: two 128-byte columns of boxes, 256 rows fit one box
    ("bf16", 256, 128, TENSOR, "128B", [64, 256], 2),
    # 384 rows: the tallest box dividing 384 within 256 is 192
    ("bf16", 384, 64, TENSOR, "128B", [64, 192], 2),
    # 300 rows: 150
    ("bf16", 300, 64, TENSOR, "128B", [64, 150], 2),
    # e4m3 travels as UINT8: 128 elements = 128 bytes
    ("e4m3", 128, 128, ([8192, 8192], [8192]), "128B", [128, 128], 1),
    # tf32: 32 elements = 128 bytes
    ("tf32", 128, 32, ([1024, 1024], [4096]), "128B", [32, 128], 1),
    # 16 bf16 = 32 bytes: only the 32B span fits
    ("bf16", 128, 16, TENSOR, "32B", [16, 128], 1),
    # 32 bf16 = 64 bytes: 64B
    ("bf16", 64, 32, TENSOR, "64B", [32, 64], 1),
    # 24 bf16 = 48 bytes: no span divides it but the 16-byte rows of no swizzle (3 of them)
    ("bf16", 128, 24, TENSOR, "NONE", [8, 128], 3),
    # a tensor only 32 elements wide: the 128-byte box is wider than it, 64B boxes tile the 64-wide tile
    ("bf16", 128, 64, ([32, 4096], [64]), "64B", [32, 128], 2),
    # a tensor of 100 rows: boxes of at most 100 rows dividing 128: 64
    ("bf16", 128, 64, ([4096, 100], [8192]), "128B", [64, 64], 2),
    # rank 3: the outer dimension is 1 in the box
    ("f16", 128, 64, ([64, 128, 8], [128, 16384]), "128B", [64, 128, 1], 1),
])
def test_largest_box(dtype, rows, inner, tensor, swizzle, box, loads):
    plan = box_synth.synthesize(dtype, rows, inner, *tensor, arch="sm90")
    assert plan.status == "found"
    assert (plan.swizzle, plan.box, plan.loads) == (swizzle, box, loads)
    element_bytes = tm.STORAGE_BITS[plan.data_type] // 8
    assert plan.bytes_per_load == box[0] * box[1] * element_bytes
    assert box[0] * element_bytes == box_synth.ROW_BYTES[swizzle]        # a box row is the span
    assert plan.loads_along[0] * plan.loads_along[1] == loads
    assert tm.violated(plan.tensor_map, "sm90") == []                    # verified by the constraints


def test_recipe_boxes_are_the_synthesized_ones():
    """solver/synth/recipe.py's K-major box for a 128 x 64 bf16 tile with 128B swizzle is this box."""
    r = recipe.build("sm90", "bf16", "K", 128, 64, "128B", 0x400)
    plan = box_synth.synthesize("bf16", 128, 64, *TENSOR, arch="sm90")
    assert r.tma["box"] == plan.box and r.tma["swizzle"] == plan.swizzle
    assert len(r.tma["loads"]) == plan.loads


@pytest.mark.parametrize("dtype,rows,inner,tensor,arch,address,reasons", [
    # rows 8200 bytes apart: not a multiple of 16 (cuTensorMapEncodeTiled globalStrides)
    ("bf16", 128, 64, ([4096, 4096], [8200]), "sm90", 0, ["tma.map.global_stride_alignment"]),
    # a global address 8 bytes off
    ("bf16", 128, 64, TENSOR, "sm90", 8, ["tma.map.global_address_alignment"]),
    # 4 bf16 = 8 bytes: every box that fits is under 16 bytes
    ("bf16", 128, 4, TENSOR, "sm90", 0, ["box_synth.tile_fit", "tma.map.box_inner_16B"]),
])
def test_no_box_names_the_rules(dtype, rows, inner, tensor, arch, address, reasons):
    plan = box_synth.synthesize(dtype, rows, inner, *tensor, arch=arch, global_address=address)
    assert plan.status == "none" and plan.box is None
    assert plan.reasons == reasons
    assert set(plan.rejected) == set(box_synth.DEFAULT_SWIZZLES)


def test_arch_excludes_the_128B_submodes_on_sm90():
    swizzles = ("128B_ATOM_32B", "64B")
    plan = box_synth.synthesize("tf32", 128, 32, [1024, 1024], [4096], arch="sm90", swizzles=swizzles)
    assert plan.swizzle == "64B" and plan.rejected == {"128B_ATOM_32B": ["tma.map.swizzle_arch"]}
    plan = box_synth.synthesize("tf32", 128, 32, [1024, 1024], [4096], arch="sm100", swizzles=swizzles)
    assert plan.swizzle == "128B_ATOM_32B" and plan.box == [32, 128]


def test_ties_go_to_the_earlier_swizzle():
    plan = box_synth.synthesize("bf16", 128, 64, *TENSOR, arch="sm100",
                                swizzles=("128B_ATOM_64B", "128B"))
    assert plan.swizzle == "128B_ATOM_64B"


def test_malformed_requests():
    with pytest.raises(ValueError):
        box_synth.synthesize("bf17", 128, 64, *TENSOR)
    with pytest.raises(ValueError):
        box_synth.synthesize("bf16", 0, 64, *TENSOR)
    with pytest.raises(ValueError):
        box_synth.synthesize("bf16", 128, 64, [4096, 4096], [])
    with pytest.raises(ValueError):
        box_synth.synthesize("bf16", 128, 64, *TENSOR, swizzles=("256B",))


def test_plan_json():
    document = box_synth.synthesize("bf16", 128, 64, *TENSOR, arch="sm90").as_json()
    assert document["box"] == [64, 128] and document["tensor_map"]["boxDim"] == [64, 128]
    assert document["loads_along"] == [1, 1]


# --- The command line: layoutproof tma box ----------------------------------------------------------------
def _run(capsys, *argv):
    import json
    from solver.cli.main import main
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, (json.loads(out.out) if out.out.strip().startswith("{") else None), out.err


def test_cli_box_for_a_bf16_tile(capsys):
    """64 bf16 = 128 bytes: the 128B span exactly; 128 rows fit one box (<= 256): one 16 KiB load,
    a map spec/tensormap calls legal on sm90."""
    rc, document, _ = _run(capsys, "tma", "box", "--dtype", "bf16", "--rows", "128", "--inner", "64",
                           "--global-dim", "4096,4096", "--global-strides", "8192", "--arch", "sm90", "--json")
    assert rc == 0 and document["swizzle"] == "128B" and document["box"] == [64, 128]
    assert document["bytes_per_load"] == 16384 and document["spec_check"]["legal"]


def test_cli_box_none_names_the_rule(capsys):
    """A row stride of 8200 bytes is no multiple of 16 (tma.map.global_stride_alignment): no map at all."""
    rc, document, _ = _run(capsys, "tma", "box", "--dtype", "bf16", "--rows", "128", "--inner", "64",
                           "--global-dim", "4096,4096", "--global-strides", "8200", "--arch", "sm90", "--json")
    assert rc == 1 and document["status"] == "none" and "tma.map.global_stride_alignment" in document["reasons"]


def test_cli_box_malformed_is_exit_2(capsys):
    rc, _, err = _run(capsys, "tma", "box", "--dtype", "bf16", "--rows", "128", "--inner", "64",
                      "--global-dim", "4096", "--global-strides", "8192", "--arch", "sm90")
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "globalStrides" in err
