"""The Z3 tensor-map legality model (solver/model/tensormap.py): valid documents for every encode kind,
for every rule a document that breaks exactly it (or the reason none exists), the boundary values of the
CUDA Driver API's cuTensorMapEncodeTiled / Im2col / Im2colWide, and the differential check against
spec/tma/tensormap.py (the concrete checker written separately)."""
from __future__ import annotations

import copy

import pytest
import z3

from solver.fuzz.tensormap_sampling import solve
from solver.model import tensormap as tm

CLI_KEYS = {"encode", "dataType", "rank", "globalAddress", "globalDim", "globalStrides", "elementStrides",
            "interleave", "swizzle", "l2Promotion", "oobFill"}
EXTRA_KEYS = {"tiled": {"boxDim"},
              "im2col": {"pixelBoxLowerCorner", "pixelBoxUpperCorner", "channelsPerPixel", "pixelsPerColumn"},
              "im2col_wide": {"pixelBoxLowerCornerWidth", "pixelBoxUpperCornerWidth", "channelsPerPixel",
                              "pixelsPerColumn", "mode"}}
# Rules that cannot break alone for an encode kind, and the rules that always break with them:
# An im2col rank below 3 is refused on its rank alone (the arrays have no length to check then: spec's
# tensormap.violations), so an im2col map never breaks interleave_rank's "rank >= 3".
NEVER = {("im2col", "tma.map.interleave_rank"), ("im2col_wide", "tma.map.interleave_rank")}
TIED = {
    ("im2col", "tma.map.rank"): ("tma.map.im2col.rank",),                # rank 6 is outside 3..5 too
    ("im2col_wide", "tma.map.rank"): ("tma.map.im2col.rank",),
    ("im2col_wide", "tma.map.interleave_swizzle"): ("tma.map.im2col_wide.interleave",),  # no interleave
    # im2col_wide always swizzles, so a destination off 128 bytes is off the swizzle's repeat too
    ("im2col_wide", "tma.box.destination_alignment"): ("tma.map.smem_alignment",),
    ("im2col_wide", "tma.map.interleave_dtype"): ("tma.map.im2col_wide.interleave",),
    ("im2col_wide", "tma.map.dtype_arch"): ("tma.map.im2col_wide.arch",),  # sm90, where wide is illegal
    ("im2col_wide", "tma.map.swizzle_arch"): ("tma.map.im2col_wide.arch",),
    # a packed 16-byte type has 128 channels = 128 bytes; wide's only swizzle outside the packed list
    # is 64B, whose span is 64 bytes
    ("im2col_wide", "tma.map.packed_swizzle"): ("tma.map.im2col.channel_span",),
    # wide swizzles span at most 128 bytes: 128 bytes x 1024 pixels = 128 KiB < 228 KiB
    ("im2col_wide", "tma.map.box_bytes"): ("tma.map.im2col.channel_span",),
}
ARCH_FIRST = {"tma.map.dtype_arch": "sm90", "tma.map.swizzle_arch": "sm90", "tma.map.im2col_wide.arch": "sm90"}


def test_rule_ids_are_exactly_the_catalogue():
    """One Z3 constraint per spec/tma/tensormap.py rule (the destination address and the copy direction,
    optional document keys, included)."""
    from spec.rules import all_rules
    catalogue = {r.id for r in all_rules() if "tensormap" in r.subjects}
    assert set(tm.RULE_IDS) == catalogue
    named = tm.constraints(tm.symbolic_record())
    assert tuple(named) == tm.RULE_IDS and all(isinstance(c, z3.BoolRef) for c in named.values())


# --- Valid documents ----------------------------------------------------------------------------------
VALID_CASES = [(e, a) for e in tm.ENCODES for a in tm.ARCHES if not (e == "im2col_wide" and a == "sm90")]


@pytest.mark.parametrize("case", VALID_CASES, ids=lambda c: "-".join(c))
def test_valid_document_obeys_every_rule(case):
    encode, arch = case
    doc = solve(encode, arch, seed=7)
    assert doc is not None and tm.violated(doc, arch) == []
    assert spec_disagreement(None, arch, doc) is None          # the differential check against spec/
    assert set(doc) == CLI_KEYS | EXTRA_KEYS[encode]
    rank = doc["rank"]
    assert len(doc["globalDim"]) == rank and len(doc["globalStrides"]) == rank - 1


def test_im2col_wide_has_no_valid_document_on_sm90():
    assert solve("im2col_wide", "sm90") is None


def test_seeds_vary_the_documents():
    docs = {repr(sorted(solve("tiled", "sm100", seed=s).items())) for s in range(6)}
    assert len(docs) >= 4


def test_96B_only_when_asked():
    assert all(solve("tiled", "sm103", seed=s)["swizzle"] != "96B" for s in range(8))
    doc = solve("tiled", "sm103", keep=set(tm.RULE_IDS), swizzles=("96B",))
    assert doc["swizzle"] == "96B" and tm.violated(doc, "sm103") == []
    assert solve("tiled", "sm100", swizzles=("96B",)) is None      # tma.map.swizzle_arch


def test_solve_rejects_bad_requests():
    with pytest.raises(ValueError):
        solve("tiled", "sm100", break_={"tma.map.nonsense"})
    with pytest.raises(ValueError):
        solve("tiled", "sm100", keep={"tma.map.rank"}, break_={"tma.map.rank"})


def test_keep_and_break_several():
    doc = solve("tiled", "sm90", keep={"tma.map.rank", "tma.map.box_range"},
                   break_={"tma.map.swizzle_arch", "tma.map.oob_nan_dtype"}, seed=3)
    broken = tm.violated(doc, "sm90")
    assert {"tma.map.swizzle_arch", "tma.map.oob_nan_dtype"} <= set(broken)
    assert "tma.map.rank" not in broken and "tma.map.box_range" not in broken


# --- Breaking exactly one rule --------------------------------------------------------------------------
def _break_exactly(encode: str, rule_id: str):
    """(arch, document) breaking exactly `rule_id`, trying the arch most likely to allow it first."""
    first = ARCH_FIRST.get(rule_id, "sm100")
    for arch in (first,) + tuple(a for a in tm.ARCHES if a != first):
        doc = solve(encode, arch, break_={rule_id}, seed=11)
        if doc is not None:
            return arch, doc
    return None, None


BREAK_CASES = [(e, r) for e in tm.ENCODES for r in tm.rules_for(e)]


@pytest.mark.parametrize("case", BREAK_CASES, ids=lambda c: f"{c[0]}-{c[1]}")
def test_each_rule_breaks_alone(case):
    encode, rule_id = case
    arch, doc = _break_exactly(encode, rule_id)
    if case in NEVER:
        assert doc is None and not any(solve(encode, a, break_={rule_id}, keep=set(), seed=2) for a in tm.ARCHES)
    elif case in TIED:
        assert doc is None
        # ...and breaking it together with its partners is possible on some arch
        together = {rule_id, *TIED[case]}
        assert any(solve(encode, a, break_=together, seed=2) is not None for a in tm.ARCHES)
    else:
        assert doc is not None, "no document breaks it alone"
        assert tm.violated(doc, arch) == [rule_id]
        assert spec_disagreement(rule_id, arch, doc) is None   # the differential check against spec/


def test_rules_of_other_encode_kinds_cannot_break():
    assert solve("im2col", "sm100", break_={"tma.map.box_range"}) is None
    assert solve("tiled", "sm100", break_={"tma.map.im2col.pixels_range"}) is None


# --- Boundary values (CUDA Driver API cuTensorMapEncodeTiled / Im2col / Im2colWide) ---------------------
from tests.differential import IM2COL, PACKED, TILED, WIDE  # noqa: E402  (the documents both tests read)

TILED_3D = dict(TILED, rank=3, globalDim=[64, 64, 8], globalStrides=[128, 8192], boxDim=[64, 64, 2],
                elementStrides=[1, 1, 1])


def changed(doc: dict, **fields) -> dict:
    """A copy with fields replaced; "key__i" replaces entry i of a list."""
    new = copy.deepcopy(doc)
    for key, value in fields.items():
        if "__" in key:
            name, index = key.split("__")
            new[name][int(index)] = value
        else:
            new[key] = value
    return new


# (name, base, arch, {legal changes}, {illegal changes}, the rule the illegal one breaks)
BOUNDARIES = [
    ("box 256 / 257", TILED, "sm90", dict(boxDim__1=256), dict(boxDim__1=257), "tma.map.box_range"),
    ("box 1 / 0", TILED, "sm90", dict(boxDim__1=1), dict(boxDim__1=0), "tma.map.box_range"),
    ("globalDim 2^32 / 2^32+1", TILED, "sm90", dict(globalDim__1=1 << 32), dict(globalDim__1=(1 << 32) + 1),
     "tma.map.global_dim_range"),
    ("globalDim 1 / 0", TILED, "sm90", dict(globalDim__1=1), dict(globalDim__1=0), "tma.map.global_dim_range"),
    ("stride 2^40-16 / 2^40", TILED, "sm90", dict(globalStrides__0=(1 << 40) - 16),
     dict(globalStrides__0=1 << 40), "tma.map.global_stride_range"),
    ("stride 16 / 8", TILED, "sm90", dict(globalStrides__0=16), dict(globalStrides__0=8200),
     "tma.map.global_stride_alignment"),
    ("address 16 / 8", TILED, "sm90", dict(globalAddress=0x7F0000000010), dict(globalAddress=0x7F0000000008),
     "tma.map.global_address_alignment"),
    ("element stride 8 / 9", TILED, "sm90", dict(elementStrides__1=8), dict(elementStrides__1=9),
     "tma.map.element_strides_range"),
    ("element stride 1 / 0", TILED, "sm90", dict(elementStrides__1=1), dict(elementStrides__1=0),
     "tma.map.element_strides_range"),
    ("dim-0 element stride without interleave", TILED, "sm90", dict(elementStrides__0=1),
     dict(elementStrides__0=2), "tma.map.element_strides_inner"),
    ("dim-0 element stride with interleave", TILED_3D, "sm90", dict(interleave="16B", elementStrides__0=2),
     dict(interleave="16B", elementStrides__0=9), "tma.map.element_strides_range"),
    ("128B span: 128 / 144 bytes", TILED, "sm90", dict(boxDim__0=64), dict(boxDim__0=72),
     "tma.map.box_swizzle_span"),
    ("64B span: 64 / 80 bytes", TILED, "sm90", dict(swizzle="64B", boxDim__0=32),
     dict(swizzle="64B", boxDim__0=40), "tma.map.box_swizzle_span"),
    ("32B span: 32 / 48 bytes", TILED, "sm90", dict(swizzle="32B", boxDim__0=16),
     dict(swizzle="32B", boxDim__0=24), "tma.map.box_swizzle_span"),
    ("96B span on sm103: 96 / 112 bytes", TILED, "sm103", dict(swizzle="96B", boxDim__0=48),
     dict(swizzle="96B", boxDim__0=56), "tma.map.box_swizzle_span"),
    ("128B_ATOM_64B span on sm100", TILED, "sm100", dict(swizzle="128B_ATOM_64B", boxDim__0=64),
     dict(swizzle="128B_ATOM_64B", boxDim__0=72), "tma.map.box_swizzle_span"),
    ("no span without swizzle; inner 16 bytes", TILED, "sm90", dict(swizzle="NONE", boxDim__0=256),
     dict(swizzle="NONE", boxDim__0=4), "tma.map.box_inner_16B"),
    ("interleaved box row 16 bytes (H100 driver)", TILED_3D, "sm90", dict(interleave="16B", boxDim__0=8),
     dict(interleave="16B", boxDim__0=4), "tma.map.box_inner_16B"),
    ("interleave 32B needs swizzle 32B", TILED_3D, "sm90", dict(interleave="32B", swizzle="32B"),
     dict(interleave="32B", swizzle="64B"), "tma.map.interleave_swizzle"),
    ("interleave needs rank 3", TILED_3D, "sm90", dict(interleave="16B"),
     dict(interleave="16B", rank=2, globalDim=[64, 64], globalStrides=[128], boxDim=[64, 64],
          elementStrides=[1, 1]), "tma.map.interleave_rank"),
    ("interleave 32B: 32-byte address", TILED_3D, "sm90", dict(interleave="32B", swizzle="32B"),
     dict(interleave="32B", swizzle="32B", globalAddress=0x7F0000000010), "tma.map.global_address_alignment"),
    ("NaN fill: float / integer", TILED, "sm90", dict(oobFill="NAN_REQUEST_ZERO_FMA"),
     dict(oobFill="NAN_REQUEST_ZERO_FMA", dataType="UINT16"), "tma.map.oob_nan_dtype"),
    ("rank 5 / 6", dict(TILED, rank=1, globalDim=[4096], globalStrides=[], boxDim=[64], elementStrides=[1]),
     "sm90", dict(rank=5, globalDim=[64] * 5, globalStrides=[128] * 4, boxDim=[64, 4, 4, 2, 2], elementStrides=[1] * 5),
     dict(rank=6, globalDim=[64] * 6, globalStrides=[128] * 5, boxDim=[64, 4, 4, 2, 2, 2], elementStrides=[1] * 6),
     "tma.map.rank"),
    ("packed: globalDim[0] 128k", PACKED, "sm100", dict(globalDim__0=128), dict(globalDim__0=192),
     "tma.map.packed_global_dim"),
    ("packed: boxDim[0] 128", PACKED, "sm100", dict(boxDim__0=128), dict(boxDim__0=64), "tma.map.packed_box"),
    ("packed: 32-byte address", PACKED, "sm100", dict(globalAddress=0x7F0000000020),
     dict(globalAddress=0x7F0000000010), "tma.map.global_address_alignment"),
    ("packed: 32-byte strides", PACKED, "sm100", dict(globalStrides__0=32), dict(globalStrides__0=48),
     "tma.map.global_stride_alignment"),
    ("packed: swizzle", PACKED, "sm100", dict(swizzle="128B_ATOM_32B"), dict(swizzle="128B_ATOM_64B"),
     "tma.map.packed_swizzle"),
    ("16U6 takes 128B_ATOM_64B", dict(PACKED, dataType="16U6_ALIGN16B"), "sm100",
     dict(swizzle="128B_ATOM_64B"), dict(swizzle="128B_ATOM_32B_FLIP_8B"), "tma.map.packed_swizzle"),
    ("im2col packed channels 128", dict(IM2COL, dataType="16U4_ALIGN16B", globalDim=[128, 7, 7, 8],
                                        channelsPerPixel=128), "sm100", {}, dict(channelsPerPixel=64),
     "tma.map.im2col.channels_range"),
    ("packed: sm100 / sm90", PACKED, "sm100", {}, dict(), None),
    ("16U4_ALIGN8B globalDim[0] even", dict(TILED, dataType="16U4_ALIGN8B", boxDim=[64, 128]), "sm100",
     dict(globalDim__0=4094), dict(globalDim__0=4095), "tma.map.packed_global_dim"),
    ("16U6 needs no interleave",
     dict(TILED_3D, dataType="16U6_ALIGN16B", globalDim=[128, 64, 8], globalStrides=[128, 8192],
          boxDim=[128, 64, 2], globalAddress=0x7F0000000020),
     "sm100", {}, dict(interleave="16B", swizzle="NONE"), "tma.map.interleave_dtype"),
    ("ATOM sub-modes: sm100 / sm90", TILED, "sm100", dict(swizzle="128B_ATOM_32B"), {}, None),
    ("im2col corners rank 4: -2^7 / -2^7-1", IM2COL, "sm90", dict(pixelBoxLowerCorner__0=-128),
     dict(pixelBoxLowerCorner__0=-129), "tma.map.im2col.corner_range"),
    ("im2col corners rank 4: 2^7-1 / 2^7", IM2COL, "sm90", dict(pixelBoxUpperCorner__1=127),
     dict(pixelBoxUpperCorner__1=128), "tma.map.im2col.corner_range"),
    ("im2col corners rank 3: -2^15 / -2^15-1",
     dict(IM2COL, rank=3, globalDim=[64, 7, 8], globalStrides=[128, 896], elementStrides=[1, 1, 1],
          pixelBoxLowerCorner=[-1], pixelBoxUpperCorner=[-1]), "sm90",
     dict(pixelBoxLowerCorner__0=-(1 << 15)), dict(pixelBoxLowerCorner__0=-(1 << 15) - 1),
     "tma.map.im2col.corner_range"),
    ("im2col corners rank 5: 2^4-1 / 2^4",
     dict(IM2COL, rank=5, globalDim=[64, 7, 7, 7, 8], globalStrides=[128, 896, 6272, 43904],
          elementStrides=[1] * 5, pixelBoxLowerCorner=[-1] * 3, pixelBoxUpperCorner=[-1] * 3), "sm90",
     dict(pixelBoxUpperCorner__2=15), dict(pixelBoxUpperCorner__2=16), "tma.map.im2col.corner_range"),
    ("im2col box area: extent 1 / 0", IM2COL, "sm90", dict(pixelBoxLowerCorner__1=0, pixelBoxUpperCorner__1=-6),
     dict(pixelBoxLowerCorner__1=0, pixelBoxUpperCorner__1=-7), "tma.map.im2col.box_area"),
    # channel counts whose rows stay multiples of 16 bytes (the H100 driver's tma.map.im2col.channels_16B)
    ("im2col channels 256 / 264", dict(IM2COL, swizzle="NONE"), "sm90", dict(channelsPerPixel=256),
     dict(channelsPerPixel=264), "tma.map.im2col.channels_range"),
    ("im2col channels 8 / 0", dict(IM2COL, swizzle="NONE"), "sm90", dict(channelsPerPixel=8),
     dict(channelsPerPixel=0), "tma.map.im2col.channels_range"),
    ("im2col channel rows 16 / 18 bytes", dict(IM2COL, swizzle="NONE"), "sm90", dict(channelsPerPixel=8),
     dict(channelsPerPixel=9), "tma.map.im2col.channels_16B"),
    ("im2col load 228 / 256 KiB", dict(IM2COL, swizzle="NONE", dataType="FLOAT32"), "sm90",
     dict(channelsPerPixel=228, pixelsPerColumn=256), dict(channelsPerPixel=256, pixelsPerColumn=256),
     "tma.map.box_bytes"),
    ("im2col pixels 1024 / 1025", IM2COL, "sm90", dict(pixelsPerColumn=1024), dict(pixelsPerColumn=1025),
     "tma.map.im2col.pixels_range"),
    ("im2col channel span 128 / 144 bytes", IM2COL, "sm90", dict(channelsPerPixel=64),
     dict(channelsPerPixel=72), "tma.map.im2col.channel_span"),
    ("im2col rank 3 / 2", dict(IM2COL, rank=3, globalDim=[64, 7, 8], globalStrides=[128, 896],
                               elementStrides=[1, 1, 1], pixelBoxLowerCorner=[-1], pixelBoxUpperCorner=[-1]),
     "sm90", {}, dict(rank=2, globalDim=[64, 7], globalStrides=[128], elementStrides=[1, 1],
                      pixelBoxLowerCorner=[], pixelBoxUpperCorner=[]), "tma.map.im2col.rank"),
    ("wide corners -2^15 / -2^15-1", WIDE, "sm100", dict(pixelBoxLowerCornerWidth=-(1 << 15)),
     dict(pixelBoxLowerCornerWidth=-(1 << 15) - 1), "tma.map.im2col_wide.corner_range"),
    ("wide corners 2^15-1 / 2^15", WIDE, "sm100", dict(pixelBoxUpperCornerWidth=(1 << 15) - 1),
     dict(pixelBoxUpperCornerWidth=1 << 15), "tma.map.im2col_wide.corner_range"),
    ("wide box area", WIDE, "sm100", dict(pixelBoxUpperCornerWidth=-8), dict(pixelBoxUpperCornerWidth=-9),
     "tma.map.im2col.box_area"),
    ("wide swizzle 64B / 32B", WIDE, "sm100", dict(swizzle="64B", channelsPerPixel=32),
     dict(swizzle="32B", channelsPerPixel=16), "tma.map.im2col_wide.swizzle"),
    ("wide swizzle 128B_ATOM_32B / NONE", WIDE, "sm100", dict(swizzle="128B_ATOM_32B"), dict(swizzle="NONE"),
     "tma.map.im2col_wide.swizzle"),
    ("wide swizzle / FLIP_8B", WIDE, "sm100", {}, dict(swizzle="128B_ATOM_32B_FLIP_8B"),
     "tma.map.im2col_wide.swizzle"),
    # W128 loads 128 pixels whatever pixelsPerColumn says, yet the H100's driver range-checks it
    ("wide W128 pixelsPerColumn 1 / 0", WIDE, "sm100", dict(mode="W128", pixelsPerColumn=1),
     dict(mode="W128", pixelsPerColumn=0), "tma.map.im2col.pixels_range"),
    ("wide interleave", WIDE, "sm100", {}, dict(interleave="16B"), "tma.map.im2col_wide.interleave"),
]


@pytest.mark.parametrize("case", BOUNDARIES, ids=lambda c: c[0])
def test_reference_boundary_values(case):
    _, base, arch, legal, illegal, rule_id = case
    assert tm.violated(changed(base, **legal), arch) == []
    if rule_id is not None:
        assert tm.violated(changed(base, **illegal), arch) == [rule_id]


@pytest.mark.parametrize("doc,arch,rule_id", [
    (PACKED, "sm90", "tma.map.dtype_arch"),
    (changed(TILED, swizzle="128B_ATOM_32B"), "sm90", "tma.map.swizzle_arch"),
    (changed(TILED, swizzle="96B", boxDim=[48, 128]), "sm100", "tma.map.swizzle_arch"),
    (WIDE, "sm90", "tma.map.im2col_wide.arch"),
])
def test_arch_rules(doc, arch, rule_id):
    assert tm.violated(doc, arch) == [rule_id]
    assert tm.violated(doc, "sm103") == []


# --- Differential: spec/tma/tensormap.py, written separately, judges the same documents -----------------------
def _rule_ids(violations) -> set:
    return {v["rule"] if isinstance(v, dict) else v.rule.id for v in violations}


# The packed 16-byte types: both writings count their shared-memory footprint (16 values in 16 bytes), so
# they agree on those maps legal or not (before, spec/ counted 4 or 6 bits a value and the two differed on
# maps already illegal: tests/solver_tests/model/test_illegal_differential.py samples such maps).


def spec_disagreement(rule_id, arch: str, doc: dict):
    """Where spec/ judges a solved document otherwise than this model (None: alike). A document Z3
    solved to break exactly rule R makes spec's check report R and no other rule of this model: among
    the violations where spec says the driver enforces R on that arch, else among the warnings; a valid
    document (rule_id None) breaks no rule of this model there. (spec/ also holds rules this model
    lacks, from the H100's driver: those are not compared. The documents use cuda.h's swizzles only:
    spec/ reads 96B as malformed in an encoder document, this model as legal on sm103.)"""
    from spec.tma import tensormap as spec_tm
    ours = set(tm.RULE_IDS)
    judged = spec_tm.check(spec_tm.parse_params(doc), arch)
    refused = _rule_ids(judged["violations"]) & ours
    warned = _rule_ids(judged["warnings"]) & ours
    expected = {rule_id} if rule_id else set()
    if refused | warned != expected:
        return (rule_id, arch, sorted(refused | warned), doc)
    if rule_id and (rule_id in refused) != spec_tm.enforced(rule_id, arch):
        return (rule_id, arch, "violation or warning?", doc)
    return None
