"""spec/scales against its evidence: ptxas 13.0's verdicts on every kind x scale-vector qualifier
(tests/hardware/scales_ptxas_forms.json, hardware/run_scales_ptxas_forms.py), CUTLASS's scale-factor atom
(include/cutlass/detail/sm100_blockscaled_layout.hpp, evaluated with pycute), nvmath-python's documented
offsets, and the manual's statements about the tensor-memory cells (PTX ISA 9.0 9.7.16.10.7)."""
from __future__ import annotations

import json
from repo_paths import TESTS_DIR  # noqa: E402  (tests/repo_paths.py)
import os

import pytest

from spec.rule import SpecError, check_all
from spec.scales import layouts, path, tmem, vectors

HARDWARE = os.path.join(TESTS_DIR, "hardware")
FORMS = json.load(open(os.path.join(HARDWARE, "scales_ptxas_forms.json")))["forms"]


@pytest.mark.parametrize("form", FORMS, ids=lambda f: f"{f['target']}-g{f['cta_group']}-{f['kind']}{f['qualifier']}")
def test_the_scale_vector_rule_is_what_ptxas_decides(form):
    try:
        vectors.vector_of(form["kind"], form["qualifier"])
        accepted = True
    except SpecError as error:
        accepted = False
        assert error.rule_id == vectors.VECTOR.id
    assert accepted == form["accepted"], form["error"]


def test_the_recorded_grid_is_whole():
    assert len(FORMS) == 3 * 6 * 2 * 2 and {f["target"] for f in FORMS} == {"sm_100a", "sm_103a"}
    assert sum(f["accepted"] for f in FORMS) == 40          # 10 of the 18 pairings, on each of 4 grids


@pytest.mark.parametrize("kind, qualifier, vector, block", [
    ("mxf8f6f4", "", "1X", 32), ("mxf8f6f4", ".block32", "1X", 32), ("mxf4", ".block32", "2X", 32),
    ("mxf4nvf4", ".block32", "2X", 32), ("mxf4nvf4", ".block16", "4X", 16), ("mxf4nvf4", ".scale_vec::4X", "4X", 16),
])
def test_aliases_and_block_sizes_are_the_manuals(kind, qualifier, vector, block):
    # PTX ISA 9.0 9.7.16.10.9.1: ".blockN: N specifies the block size"; .block32 = 1X (mxf8f6f4) / 2X
    assert vectors.vector_of(kind, qualifier) == vector
    assert vectors.block_size(kind, vector) == block


SCALE_CONFIG_BREAKERS = {            # each breaks exactly its rule
    vectors.VECTOR.id: vectors.ScaleConfig("mxf8f6f4", "4X"),
    vectors.SCALE_TYPE.id: vectors.ScaleConfig("mxf4nvf4", "2X", "ue4m3"),
    vectors.SF_ID.id: vectors.ScaleConfig("mxf4", "2X", sf_id_b=1),
}


def test_each_scale_rule_has_a_configuration_that_breaks_it_alone():
    from spec.rule import rules_for
    assert set(SCALE_CONFIG_BREAKERS) == {r.id for r in rules_for("scale_config")}
    for rule_id, config in SCALE_CONFIG_BREAKERS.items():
        assert [v.rule.id for v in check_all("scale_config", config)] == [rule_id]


def test_the_configuration_rules_refuse_what_the_manual_excludes():
    assert check_all("scale_config", vectors.ScaleConfig("mxf4nvf4", "4X", "ue4m3")) == []
    broken = {v.rule.id for v in check_all("scale_config", vectors.ScaleConfig("mxf4", "2X", "ue4m3", sf_id_a=1))}
    assert broken == {vectors.SCALE_TYPE.id, vectors.SF_ID.id}
    assert {v.rule.id for v in check_all("scale_config", vectors.ScaleConfig("mxf8f6f4", "4X"))} == {vectors.VECTOR.id}


# --- the writer layouts ------------------------------------------------------------------------------------

def _cutlass_atom():
    """CUTLASS's SfKMajorAtom ((32,4),(SFVecSize,4)):((16,4),(0,1)) as pycute evaluates it, with the header's
    text checked so that the transcription cannot drift."""
    cutlass_library = pytest.importorskip("cutlass_library")
    header = os.path.join(os.path.dirname(cutlass_library.__file__), "source", "include", "cutlass", "detail",
                          "sm100_blockscaled_layout.hpp")
    text = " ".join(open(header).read().split())
    assert "using SfKMajorAtom = Layout< Shape< Shape<_32,_4>, Shape<Int<SFVecSize>, _4>>, " \
           "Stride<Stride<_16,_4>, Stride< _0, _1>>>;" in text
    pycute = pytest.importorskip("pycute")
    return lambda vec: pycute.Layout(((32, 4), (vec, 4)), ((16, 4), (0, 1)))


@pytest.mark.parametrize("vec", [16, 32])
def test_the_interleaved_tile_is_cutlasss_atom(vec):
    atom = _cutlass_atom()(vec)
    for m in range(128):
        for k in range(4 * vec):
            assert atom((m, k)) == layouts.offset("interleaved", m, k // vec, 128, 4)


def test_the_interleaved_layout_gives_nvmaths_documented_offsets():
    # nvmath-python, get_block_scale_offset: NVFP4 A of 128 x 128 (8 blocks of 16): (5, 2) -> 82, (5, 5) -> 593
    assert layouts.offset("interleaved", 5, 2, 128, 8) == 82
    assert layouts.offset("interleaved", 5, 5, 128, 8) == 593


@pytest.mark.parametrize("layout", layouts.LAYOUTS)
@pytest.mark.parametrize("rows, blocks", [(128, 4), (256, 8), (200, 5), (32, 1), (129, 9)])
def test_every_layout_is_one_to_one_inside_its_footprint(layout, rows, blocks):
    seen = {layouts.offset(layout, r, c, rows, blocks) for r in range(rows) for c in range(blocks)}
    assert len(seen) == rows * blocks and max(seen) < layouts.footprint(layout, rows, blocks)


def test_sizes_are_checked_before_work():
    with pytest.raises(SpecError) as error:
        layouts.offsets("interleaved", 1 << 20, 1 << 20, 16)
    assert error.value.field_name == "rows"
    with pytest.raises(SpecError):
        layouts.offsets("swizzled", 128, 64, 16)


# --- tensor memory and the whole path ----------------------------------------------------------------------

def test_a_rows_scales_sit_in_one_word_replicated_in_the_four_sub_partitions():
    # PTX ISA 9.0 9.7.16.10.7: "duplicated to all 32 lane partitions"; 9.7.16.10.7.2: SFA_ID a byte offset
    assert tmem.scale_cell(37, 0, "1X", 3) == ((5, 37, 69, 101), 1, 3)
    assert tmem.scale_cell(127, 1, "2X", 2) == ((31, 63, 95, 127), 3, 3)
    assert tmem.scale_cell(200, 3, "4X", 0, rows=256) == ((8, 40, 72, 104), 6, 3)
    with pytest.raises(SpecError):
        tmem.scale_cell(0, 0, "2X", 1)                      # 2X takes a half word: 0 or 2


@pytest.mark.parametrize("kind, vector", [("mxf8f6f4", "1X"), ("mxf4", "2X"), ("mxf4nvf4", "2X"), ("mxf4nvf4", "4X")])
@pytest.mark.parametrize("rows, k", [(128, 512), (256, 1024), (200, 320)])
def test_the_interleaved_writer_is_read_right_and_a_linear_one_is_not(kind, vector, rows, k):
    assert path.first_misread("interleaved", rows, k, kind, vector) is None
    blocks = layouts.blocks_of(k, vectors.block_size(kind, vector))
    for writer in ("linear-k", "linear-mn"):
        found = path.first_misread(writer, rows, k, kind, vector)
        if writer == "linear-k" and blocks <= 4 and rows <= 32:
            continue
        assert found is not None and found["applied_offset"] != found["expected_offset"]


def _cutlass_sf_frg_atom():
    """CUTLASS's UMMA::tmem_sf_frg atom for SFA (and SFB on the 4x1 data path), as pycute evaluates it, with
    the header's text checked so that the transcription cannot drift (cute/atom/mma_traits_sm100.hpp)."""
    cutlass_library = pytest.importorskip("cutlass_library")
    header = os.path.join(os.path.dirname(cutlass_library.__file__), "source", "include", "cute", "atom",
                          "mma_traits_sm100.hpp")
    text = " ".join(open(header).read().split())
    assert ("auto tmem_atom = Layout < Shape< Shape< Shape<Int<SUBPART_DPs>, Int<MMA_MN/SUBPART_DPs>>, REP>, "
            "Shape<Int<MMA_VS>, Int<MMA_NSF>>>, Stride<Stride<Stride< _1, _512>, _32>, Stride< _0, _128>>>{};") in text
    assert "Layout tmem_restride = Layout<Shape < _128, _16384>, Stride<TMEM::DP<ValueType>, COL_ADDR>>{};" in text
    pycute = pytest.importorskip("pycute")
    return lambda mn, vs, nsf: pycute.Layout((((32, mn // 32), 4), (vs, nsf)), (((1, 512), 32), (0, 128)))


@pytest.mark.parametrize("vector, vs", [("1X", 32), ("2X", 32), ("4X", 16)])
@pytest.mark.parametrize("mn", [128, 256])
def test_the_tmem_cells_are_cutlasss_tmem_sf_frg(vector, vs, mn):
    """CUTLASS's logical index x restrides to lane x mod 128 and element column x div 128 (Layout<(128,
    16384):(DP, 1)>); an 8-bit tmem_ptr puts element column e at word e div 4, byte e mod 4 (cute/pointer.hpp:
    rotr by log2(32/8)). That must be spec's cell for the first MMA (scale-factor id 0)."""
    atom = _cutlass_sf_frg_atom()(mn, vs, vectors.SCALES_PER_ROW[vector])
    for m in range(mn):
        for s in range(vectors.SCALES_PER_ROW[vector]):
            places = set()
            for q in range(4):
                for v in (0, vs - 1):
                    x = atom((((m % 32, m // 32), q), (v, s)))
                    lane, element = x % 128, x // 128
                    places.add((lane, element // 4, element % 4))
            lanes, column, byte = tmem.scale_cell(m, s, vector, 0, rows=mn)
            assert places == {(lane, column, byte) for lane in lanes}


@pytest.mark.parametrize("vector, vs", [("1X", 32), ("2X", 32), ("4X", 16)])
@pytest.mark.parametrize("n", [128, 256])
def test_the_2x2_cells_of_b_are_cutlasss(vector, vs, n):
    """CUTLASS's SFB atom on the 2 x 2 data path: (((32, N/2/32), 2, 2), (VS, NSF)) : (((1, 512), 64, 32),
    (0, 128)), the header's text checked; restrided and decoded as for the 4 x 1 atom."""
    cutlass_library = pytest.importorskip("cutlass_library")
    header = os.path.join(os.path.dirname(cutlass_library.__file__), "source", "include", "cute", "atom",
                          "mma_traits_sm100.hpp")
    text = " ".join(open(header).read().split())
    assert ("auto tmem_atom = Layout < Shape< Shape< Shape<Int<SUBPART_DPs>, Int<MMA_MN/2/SUBPART_DPs>>, _2, _2>, "
            "Shape<Int<MMA_VS>, Int<MMA_NSF>>>, Stride<Stride<Stride< _1 , _512>, _64, _32>, "
            "Stride< _0, _128>>>{};") in text
    pycute = pytest.importorskip("pycute")
    nsf = vectors.SCALES_PER_ROW[vector]
    atom = pycute.Layout((((32, n // 64), 2, 2), (vs, nsf)), (((1, 512), 64, 32), (0, 128)))
    for column in range(n):
        half, within = divmod(column, n // 2)
        for s in range(nsf):
            places = set()
            for rep in range(2):
                x = atom((((within % 32, within // 32), half, rep), (0, s)))
                places.add((x % 128, (x // 128) // 4, (x // 128) % 4))
            lanes, word, byte = tmem.scale_cell(column, s, vector, 0, rows=n, data_path="2x2")
            assert places == {(lane, word, byte) for lane in lanes}


@pytest.mark.parametrize("form, held", [
    # PTX ISA 9.0 9.7.16.9.1: .128x128b writes row L to lane L; .64x128b.warpx2::02_13 row r to lanes r and
    # r + 64: lane 32q of chunk 0's copy holds its row 32q (bytes 512q on) or, for 02_13, row 32 (q mod 2)
    ("128x128b", [0, 512, 1024, 1536]), ("64x128b.warpx2::02_13", [0, 512, 0, 512])])
def test_another_copy_form_leaves_the_sub_partitions_different(form, held):
    found = path.check("interleaved", "mxf4nvf4", "4X", 128, 256, form)
    assert not found.ok and found.copy == form
    assert (found.misread["row"], found.misread["k_block"], found.misread["sub_partitions"]) == (0, 0, held)
    assert found.misread["applied_offset"] is None


def test_the_standard_copy_form_reads_every_scale():
    assert path.check("interleaved", "mxf4nvf4", "4X", 256, 1024, "32x128b.warpx4").ok
