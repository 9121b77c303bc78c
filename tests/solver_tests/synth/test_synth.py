"""Synthesis and checking (layoutproof synth / check).

Expectations come from CuTe (pycute-built tiles and the fields make_gmma_desc / make_umma_desc read off
them), from the manual's worked examples, and from spec's read map, which must agree with every
descriptor synth returns."""
import pytest
from hypothesis import given, settings, strategies as st

from cute_tiles import CASES, cute_tile, cutlass_descriptor, spec_layout
from solver.synth import descriptor as synth
from spec.mma import descriptor
from spec.mma import dtypes
from spec.mma import readmap
from spec.cute.layout import ComposedLayout, Layout
from spec.rules import SpecError
from spec.cute.swizzle import DESCRIPTOR_SWIZZLES


def reads_tile(tile, desc) -> bool:
    op = readmap.make_operand(desc, tile.dtype, tile.major, tile.mn, tile.k, tile.kind)
    return readmap.read_addresses(op) == tile.targets()


@pytest.mark.parametrize("k_first", [False, True], ids=["mn-first", "k-first"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c)))
def test_synth_finds_cutlass_descriptors(case, k_first):
    """Every K block of a CuTe tile: synth gives make_*_desc's start, LBO and SBO (fields the hardware
    ignores for this read may differ) and base offset 0."""
    arch, major, swizzle, dtype_name, mn, k_tile = case
    d = dtypes.dtype(dtype_name)
    k_inst = dtypes.default_instruction_k(d, dtypes.default_kind(d))
    offset, _, _, atom_k = cute_tile(major, swizzle, dtype_name, mn, k_tile, k_first)
    layout = spec_layout(major, swizzle, dtype_name, mn, k_tile, k_first)
    base = 0x2000
    for k_block in range(k_tile // k_inst):
        k0 = k_block * k_inst
        start = base + offset(0, k0) * d.bits // 8
        expected = cutlass_descriptor(arch, major, swizzle, dtype_name, offset, start, atom_k)
        tile = synth.make_tile(arch, dtype_name, major, mn, layout, base, k_offset=k0)
        outcome = synth.synthesize(tile)
        assert outcome.status == "found", outcome.reason
        got = outcome.descriptor
        assert got.swizzle == swizzle and got.base_offset == 0
        for name in ("start_address", "leading_byte_offset", "stride_byte_offset"):
            if name not in outcome.ignored:
                assert getattr(got, name) == getattr(expected, name), (k_block, name)
        assert reads_tile(tile, got)


# The manual's worked examples (PTX 9.7.16.3.3 Canonical Layouts, Figures 188-192): layout, MN extent,
# and the LBO/SBO bytes its tables give ("NA" for Figure 189's LBO: swizzled K-major, not used).
EXAMPLES = [
    ("K", "tf32", "Swizzle<0,4,3> o ((8,2),(4,4)):((4,32),(1,64))", 16, 64 * 4, 32 * 4),
    ("K", "tf32", "Swizzle<1,4,3> o ((8,2),(4,4)):((8,64),(1,4))", 16, None, 64 * 4),
    ("MN", "bf16", "Swizzle<0,4,3> o ((8,1,2),(8,2)):((1,8,64),(8,128))", 16, 128 * 2, 64 * 2),
    ("MN", "bf16", "Swizzle<1,4,3> o ((8,2,2),(8,2)):((1,8,128),(16,256))", 32, 128 * 2, 256 * 2),
    ("MN", "bf16", "Swizzle<2,4,3> o ((8,4,2),(8,2)):((1,8,256),(32,512))", 64, 256 * 2, 512 * 2),
]


@pytest.mark.parametrize("arch", ["sm90", "sm100"])
@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e[2].split(" o ")[0])
def test_manual_examples_round_trip_through_synth(arch, example):
    major, dtype_name, layout, mn, lbo, sbo = example
    tile = synth.make_tile(arch, dtype_name, major, mn, layout, 0x1000)
    outcome = synth.synthesize(tile)
    assert outcome.status == "found", outcome.reason
    got = outcome.descriptor
    assert got.stride_byte_offset == sbo and got.start_address == 0x1000
    if lbo is None:
        assert "leading_byte_offset" in outcome.ignored and got.leading_byte_offset == 16  # "1 (assumed)"
    else:
        assert got.leading_byte_offset == lbo


@pytest.mark.parametrize("layout, why", [
    ("(64,16):(16,1)", "rows 32 B apart with no swizzle"),
    ("Sw<3,4,3> o (64,64):(64,1)", "128-byte rows in plain row-major order (canonical: SBO = 1024)"),
    ("Sw<2,4,3> o ((8,8),64):((64,512),1)", "128-byte rows under a 64B swizzle"),
    ("((8,8),(8,2)):((8,64),(1,600))", "second K chunk 1200 bytes away, not a multiple of 16"),
])
def test_non_canonical_layouts(layout, why):
    tile = synth.make_tile("sm90", "bf16", "K", 64, layout, 0x400)
    outcome = synth.synthesize(tile)
    if outcome.status == "found":      # then it must really read the tile
        assert reads_tile(tile, outcome.descriptor), why
    else:
        assert "readmap." in outcome.reason and "element" in outcome.reason, outcome.reason


def test_none_names_rules_and_elements():
    outcome = synth.synthesize(synth.make_tile("sm90", "bf16", "K", 64, "(64,16):(16,1)", 0x400))
    assert outcome.status == "none"
    assert "readmap.k_major.none" in outcome.reason and "readmap.k_major.swizzled" in outcome.reason
    assert "element (1,0)" in outcome.reason


def test_table54_exclusions_are_reasons():
    """tf32 MN-major on sm100 may only use 128B_atom32B: a tf32 MN-major tile in a 128B layout has no
    descriptor, and the reason cites Table 54 for the other swizzles."""
    layout = "Sw<3,4,3> o ((32,2),(8,1)):((1,256),(32,0))"
    outcome = synth.synthesize(synth.make_tile("sm100", "tf32", "MN", 64, layout, 0x400))
    assert outcome.status == "none" and "operand.swizzle.table54" in outcome.reason


def test_all_lists_equivalent_descriptors_and_ignored_fields():
    """Found by synth --all and confirmed here by spec: a 128B K-major tile is also read by the start
    address 64 bytes in with base offset 4 (XOR 4 and 'minus 4' agree on a 3-bit phase)."""
    tile = synth.make_tile("sm90", "bf16", "K", 64, "Sw<3,4,3> o ((8,8),64):((64,512),1)", 0x400)
    outcome = synth.synthesize(tile, all_solutions=True)
    starts = {(s["fields"]["start_address"], s["fields"]["base_offset"]) for s in outcome.solutions}
    assert (0x400, 0) in starts and (0x440, 4) in starts
    for s in outcome.solutions:
        assert reads_tile(tile, descriptor.decode("sm90", int(s["descriptor"], 16)))
        assert s["ignored"] == ["leading_byte_offset"]


# --- sm103: 48-byte K slices in absolute LBO mode -----------------------------------------------------
def k96_tile(k_offset: int):
    """Two 128B K-major e2m1 buffers (128 rows x 256 e2m1 each = 128 B per row), 16 KiB apart; the K
    slices of 96 elements start at byte 0/48/96 of a row and spill into the next buffer."""
    rows = Layout(((8, 16), (256, 2)), ((256, 2048), (1, 32768)))
    return synth.make_tile("sm103", "e2m1", "K", 128, ComposedLayout(DESCRIPTOR_SWIZZLES["128B"], 0, rows),
                           0x4000, k=96, k_offset=k_offset, kind="mxf4")


@pytest.mark.parametrize("k_offset, lbo_mode", [(0, "relative"), (96, "relative"), (192, "absolute"),
                                                (288, "relative"), (384, "relative")])
def test_k96_slices(k_offset, lbo_mode):
    """CUTLASS's K = 96 slices: bytes 0-47 and 48-95 of a row fit in it (relative mode); 96-143 puts
    32 bytes at the end of buffer 0 and 16 at the start of buffer 1 (absolute mode, LBO = buffer 1);
    then 16-63 and 64-111 of buffer 1 fit again. spec confirms every element of each descriptor."""
    tile = k96_tile(k_offset)
    outcome = synth.synthesize(tile)
    assert outcome.status == "found", outcome.reason
    assert outcome.descriptor.lbo_mode == lbo_mode
    if lbo_mode == "absolute":        # the second chunk: buffer 1, 32768 e2m1 = 16 KiB after buffer 0
        assert outcome.descriptor.leading_byte_offset == 0x4000 + 0x4000
    assert reads_tile(tile, outcome.descriptor)


# --- hypothesis: whatever synth returns, spec confirms ---------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(swizzle=st.sampled_from(["none", "32B", "64B", "128B"]), major=st.sampled_from(["K", "MN"]),
       groups=st.integers(1, 4), gap=st.integers(0, 3), base_line=st.integers(0, 40), k_first=st.booleans())
def test_synthesized_descriptors_are_confirmed_by_spec(swizzle, major, groups, gap, base_line, k_first):
    _synthesize_and_confirm(swizzle, major, groups, gap, base_line, k_first)


def _synthesize_and_confirm(swizzle, major, groups, gap, base_line, k_first) -> bool:
    """Synthesize a descriptor for the tile the parameters describe; a found one must read the tile (spec's
    read map), a refusal must name an element. True when one was found."""
    W = {"none": 16, "32B": 32, "64B": 64, "128B": 128}[swizzle]
    block = 8 * W                                     # one core-matrix group / swizzle atom, bytes
    step = block + 128 * gap                          # blocks spaced out by whole lines
    per_row = W // 2                                  # bf16 elements in a W-byte row
    if major == "K":
        shape = ((8, groups), (per_row, 2)) if swizzle == "none" else ((8, groups), (per_row, 1))
        stride = ((per_row, step // 2 if not k_first else step // 2 * 2), (1, groups * step // 2 if not k_first else step // 2))
        mn = 8 * groups
    else:
        shape = ((per_row, groups), (8, 2))
        stride = ((1, step // 2 * (1 if not k_first else 2)), (per_row, (groups * step // 2) if not k_first else step // 2))
        mn = per_row * groups
    layout = Layout(shape, stride)
    tile = synth.make_tile("sm90", "bf16", major, mn,
                           ComposedLayout(DESCRIPTOR_SWIZZLES[swizzle], 0, layout), 1024 * base_line)
    outcome = synth.synthesize(tile)
    if outcome.status == "found":
        assert reads_tile(tile, outcome.descriptor)
    else:
        assert "element" in outcome.reason
    return outcome.status == "found"


def test_the_random_layouts_are_mostly_readable():
    """The hypothesis test above is not vacuous: on a fixed grid of its parameters (its own, so that it
    does not depend on which worker ran the other test), most layouts have a descriptor."""
    found = [_synthesize_and_confirm(swizzle, major, groups, gap, 3, k_first)
             for swizzle in ("none", "32B", "64B", "128B") for major in ("K", "MN")
             for groups in (1, 3) for gap in (0, 2) for k_first in (False, True)]
    assert sum(found) >= len(found) // 2


# --- check ---------------------------------------------------------------------------------------------
def test_check_reports_first_mismatch_and_the_field_to_change():
    tile = synth.make_tile("sm90", "bf16", "K", 64, "Sw<3,4,3> o ((8,8),64):((64,512),1)", 0x400, k_offset=16)
    wrong = descriptor.encode("sm90", 0x400, 16, 1024, "128B")        # forgot to advance K
    report = synth.check(tile, wrong)
    assert not report["match"]
    assert report["mismatch"] == {"mn": 0, "k": 16, "expected": tile.target(0, 0), "read": 0x400}
    assert report["fix"] == {"start_address": {"from": 0x400, "to": 0x420}}
    right = descriptor.decode("sm90", int(report["suggested_descriptor"], 16))
    assert synth.check(tile, right)["match"]


def test_bad_tile_input_is_a_spec_error():
    with pytest.raises(SpecError):
        synth.make_tile("sm90", "bf16", "K", 64, "(64,8):(8,1)", 0x400, k_offset=0)    # K 8 < 16
    with pytest.raises(SpecError):
        synth.make_tile("sm90", "bf16", "K", 12, "(64,16):(16,1)", 0x400)
    with pytest.raises(SpecError):
        synth.make_tile("sm90", "bf16", "K", 64, "(64,16):(16,1)", 0x408)
