"""spec.cute.layout: worked examples (PTX 9.7.16.3.3 Canonical Layouts; CuTe docs 0z_tma_tensors.md) and
differential tests against NVIDIA's pycute, the independent oracle."""
import itertools
import re

import pycute
import pytest
from hypothesis import given, settings, strategies as st

from spec.cute.layout import ArithTuple, Basis, ComposedLayout, Layout, compact_col_major, congruent, crd2idx, depth, flatten, idx2crd, product, rank, weakly_congruent
from spec.cute.notation import parse_layout
from spec.rules import CATALOGUE, SpecError
from spec.cute.swizzle import Swizzle

# --- PTX 9.7.16.3.3 (Canonical Layouts, Examples): the "Exact layout" strings -----------------------

EXACT_LAYOUTS = {
    "Swizzle<0,4,3> o ((8,2),(4,4)):((4,32),(1,64))": 256,        # K-major, none, tf32
    "Swizzle<1,4,3> o ((8,2),(4,4)):((8,64),(1,4))": 256,         # K-major, 32B, tf32
    "Swizzle<0,4,3> o ((8,1,2),(8,2)):((1,8,64),(8,128))": 256,   # MN-major, none, bf16
    "Swizzle<1,4,3> o ((8,2,2),(8,2)):((1,8,128),(16,256))": 512,  # MN-major, 32B, bf16
    "Swizzle<2,4,3> o ((8,4,2),(8,2)):((1,8,256),(32,512))": 1024,  # MN-major, 64B, bf16
}


@pytest.mark.parametrize("text,size", EXACT_LAYOUTS.items())
def test_exact_layouts_parse_size_and_print(text, size):
    layout = parse_layout(text)
    assert isinstance(layout, ComposedLayout)
    assert layout.size() == size
    assert layout.notation() == text.replace("Swizzle<", "Sw<")
    assert parse_layout(layout.notation()) == layout
    assert str(layout.layout) == text.split(" o ")[1]


def test_k_major_none_tf32_by_hand():
    layout = parse_layout("Swizzle<0,4,3> o ((8,2),(4,4)):((4,32),(1,64))")
    # row 9 = (1,1) -> 1*4 + 1*32 = 36; column 5 = (1,1) -> 1*1 + 1*64 = 65; Sw<0,..> is the identity.
    assert layout(9, 5) == 101
    assert layout(((1, 1), (1, 1))) == 101
    assert layout.layout[0](9) == 36 and layout.layout[1](5) == 65
    # 1-D index 9 + 16*5 = 89 is the same element (colexicographic: rows fastest).
    assert layout(89) == 101


def test_k_major_32b_tf32_by_hand():
    layout = parse_layout("Swizzle<1,4,3> o ((8,2),(4,4)):((8,64),(1,4))")
    # row 15 = (7,1) -> 56 + 64 = 120; column 15 = (3,3) -> 3 + 12 = 15; offset 135 = 0b1000_0111.
    assert layout.layout(15, 15) == 135
    # Sw<1,4,3>: bit 7 is XORed into bit 4: 135 ^ 16 = 151.
    assert layout(15, 15) == 151
    assert layout(1, 0) == 8          # bit 7 clear: unchanged


def test_mn_major_64b_bf16_by_hand():
    layout = parse_layout("Swizzle<2,4,3> o ((8,4,2),(8,2)):((1,8,256),(32,512))")
    # row 51 = (3,2,1) -> 3 + 16 + 256 = 275; column 13 = (5,1) -> 160 + 512 = 672; 947 = 0b11_1011_0011.
    assert layout.layout(51, 13) == 947
    # Sw<2,4,3>: bits 8:7 (= 0b11) are XORed into bits 5:4 (= 0b11): 947 ^ 48 = 899.
    assert layout(51, 13) == 899


# --- CuTe docs 0z_tma_tensors.md (TMA tensors): basis strides -----------------------------------------

def test_basis_strides_identity_and_transpose():
    identity = Layout((4, 8), (Basis(1, 0), Basis(1, 1)))
    transpose = Layout((4, 8), (Basis(1, 1), Basis(1, 0)))
    for i, j in itertools.product(range(4), range(8)):
        assert identity(i, j) == (i, j)
        assert transpose(i, j) == (j, i)
    assert identity(5) == (1, 1)       # 1-D index 5 = (1,1) colexicographically


def test_basis_notation_accepts_cute_static_spelling():
    layout = parse_layout("(_4,_8):(_1@0,_1@1)")
    assert layout == Layout((4, 8), (Basis(1, 0), Basis(1, 1)))
    assert layout.notation() == "(4,8):(1@0,1@1)"
    assert parse_layout("( 4 , 8 ) : ( 2@1 , _3@0 )")(1, 1) == (3, 2)


def test_basis_arithmetic():
    assert Basis(1, 0) * 3 == Basis(3, 0) == 3 * Basis(1, 0)
    assert Basis(2, 1).as_tuple() == (0, 2)
    assert Basis(1, 0) + Basis(1, 1) == ArithTuple((1, 1))
    assert Basis(1, 2) + Basis(4, 0) == ArithTuple((4, 0, 1))
    assert 0 + Basis(1, 1) == Basis(1, 1)
    assert Basis(1, (0,)) == Basis(1, 0)
    with pytest.raises(SpecError):
        Basis(1, 0) + 5


def test_hierarchical_basis():
    # CuTe's E<1,0> = (_0,(_1)) prints _1@0@1: the outermost mode is printed last.
    e10 = Basis(1, (1, 0))
    assert e10.as_tuple() == (0, (1,))
    assert e10.notation() == "1@0@1"
    assert parse_layout("(2,3):(_1@0@1,_1@0)") == Layout((2, 3), (e10, Basis(1, 0)))
    assert Layout((2, 3), (e10, Basis(1, 0)))(1, 2) == (2, (1,))


def test_zero_stride_mixes_with_bases_other_integers_do_not():
    broadcast = Layout((4, 8), (Basis(1, 0), 0))
    assert broadcast(3, 7) == (3,)
    with pytest.raises(SpecError) as raised:
        Layout((4, 8), (Basis(1, 0), 2))
    assert raised.value.rule_id == "layout.basis_strides"
    with pytest.raises(SpecError):
        Layout((4, 8), (Basis(1, 0), Basis(1, (0, 1))))   # an int and a tuple at position 0
    with pytest.raises(SpecError):
        ComposedLayout(Swizzle(3, 4, 3), 0, broadcast)
    with pytest.raises(SpecError):
        broadcast.cosize()


# --- IntTuple helpers -------------------------------------------------------------------------------

def test_int_tuple_helpers():
    t = ((8, 2), (4, (4, 3)))
    assert flatten(t) == (8, 2, 4, 4, 3) and flatten(5) == (5,)
    assert rank(t) == 2 and rank(5) == 1
    assert depth(t) == 3 and depth(5) == 0 and depth((1, 2)) == 1
    assert product(t) == 8 * 2 * 4 * 4 * 3 and product(7) == 7
    assert congruent(t, ((1, 8), (16, (64, 256)))) and not congruent(t, ((1, 8), (16, 64)))
    assert weakly_congruent((1, 2), t) and not weakly_congruent(t, (1, 2))
    assert compact_col_major(t) == ((1, 8), (16, (64, 256)))
    assert Layout(t) == Layout(t, compact_col_major(t))


def test_layout_basics():
    layout = parse_layout("((8,2),(4,4)):((4,32),(1,64))")
    assert layout.rank == 2 and len(layout) == 2
    assert layout[0] == Layout((8, 2), (4, 32)) and layout[1].notation() == "(4,4):(1,64)"
    assert Layout(8, 1).notation() == "8:1" and str(Layout(8, 1)) == "8:1"
    assert Layout((8,), (1,)).notation() == "(8):(1)"
    assert parse_layout("(8):(1)") == Layout((8,), (1,))
    assert layout.cosize() == 4 * 7 + 32 + 3 + 64 * 3 + 1
    assert Layout((4, 2), (-1, 4)).cosize() == 5    # max image 4 (pycute: L(7)+1 = 2)
    composed = parse_layout("Sw<3,4,3> o 128 o (8,8):(8,1)")
    assert composed.offset == 128 and composed.notation() == "Sw<3,4,3> o 128 o (8,8):(8,1)"
    assert parse_layout("Sw<3,4,3> o 0 o 8:1").notation() == "Sw<3,4,3> o 8:1"
    assert composed[1] == ComposedLayout(Swizzle(3, 4, 3), 128, Layout(8, 1))


def test_coordinates_out_of_range_follow_crd2idx():
    shape, stride = (2, 3), (1, 10)
    # The last mode takes the rest: 7 = (1, 3), so both spellings give 1 + 30.
    assert idx2crd(7, shape) == (1, 3)
    assert crd2idx(7, shape, stride) == crd2idx(idx2crd(7, shape), shape, stride) == 31


def test_bad_coordinates():
    layout = Layout((4, 8), (1, 4))
    for bad in [(1, 2, 3), ((1, 2), 3), "x", ()]:
        with pytest.raises(SpecError) as raised:
            layout(bad)
        assert raised.value.field_name == "coordinate"
    with pytest.raises(SpecError):
        layout()
    with pytest.raises(SpecError):
        crd2idx((1, 2), (4, 8), (1, 2, 3))


def test_rules_registered():
    for rule_id in ("layout.notation", "layout.colexicographic", "layout.basis_strides"):
        assert rule_id in CATALOGUE


# --- Parsing: malformed text ---------------------------------------------------------------------------

MALFORMED = [
    "", "   ", "(8,2", "(8,2):(1)", "8:1)", "8", "8:", ":1", "(8,,2):(1,2)", "(8,):(1,)", "()", "():()",
    "Sw<3,4> o 8:1", "Sw<3,4,3> 8:1", "Sw<3,4,3> o", "Sw3,4,3 o 8:1", "Swizzle<3,4,3 o 8:1",
    "Sw<-1,4,3> o 8:1", "Sw<3,4,3> o 8 o", "Sw<3,4,3> o (8,8):(8,1)@0", "(8,x):(1,2)", "8:1@", "8:1@-1",
    "8@0:1", "0:1", "-4:1", "(8,2):(1@0,2)", "(2,2):(1@0,1@0@0)", "_:1", "-:1", "8:--1", "8:1 junk",
    "8:1 o 8:1", "(" * 5000, "(" * 70 + "8" + ")" * 70 + ":1", "8:1\n2", "8 : 1 :", "8:1.5", "8:0x10",
]


@pytest.mark.parametrize("text", MALFORMED)
def test_malformed_text_is_a_spec_error(text):
    with pytest.raises(SpecError) as raised:
        parse_layout(text)
    error = raised.value
    assert error.field_name == "layout" and error.value == text
    assert error.rule_id == "layout.notation"
    assert "position" in error.problem and "\n" not in error.problem


def test_non_text_is_a_spec_error():
    with pytest.raises(SpecError):
        parse_layout(None)


def test_whitespace_and_static_ints():
    expected = Layout(((8, 2), (4, 4)), ((4, 32), (1, 64)))
    assert parse_layout(" ( ( _8 , _2 ) , ( 4 ,4 ) ) :\t((_4,32),(_1,64)) ") == expected
    assert parse_layout("Sw<3,4,3>o((8,16),(64,2)):((64,512),(1,8192))").layout.size() == 16384
    assert parse_layout("(_4,_2):(_-1,-8)") == Layout((4, 2), (-1, -8))


# --- Differential tests against pycute --------------------------------------------------------------

def shapes(levels=3):
    leaf = st.integers(1, 5)
    if levels == 0:
        return leaf
    return st.one_of(leaf, st.lists(shapes(levels - 1), min_size=1, max_size=3).map(tuple))


small_shapes = shapes().filter(lambda s: product(s) <= 1024)


def like(shape, leaf):
    """A strategy for IntTuples congruent with shape."""
    if isinstance(shape, tuple):
        return st.tuples(*(like(s, leaf) for s in shape))
    return leaf


int_strides = st.integers(-40, 40)
layouts = small_shapes.flatmap(lambda s: like(s, int_strides).map(lambda d: Layout(s, d)))


def weak_coordinate(shape, index):
    """A strategy for coordinates of `index` weakly congruent with shape: subtrees collapsed to 1-D."""
    if not isinstance(shape, tuple):
        return st.just(index)
    parts = pycute.idx2crd(index, shape)  # natural coordinate of each top mode, then re-collapsed
    children = [weak_coordinate(s, pycute.crd2idx(p, s)) for p, s in zip(parts, shape)]
    return st.one_of(st.just(index), st.tuples(*children))


@settings(max_examples=600, deadline=None)
@given(layouts)
def test_layout_matches_pycute(layout):
    oracle = pycute.Layout(layout.shape, layout.stride)
    assert layout.size() == oracle.size()
    images = [layout(i) for i in range(layout.size())]
    assert images == [oracle(i) for i in range(layout.size())]
    assert layout.cosize() == max(images) + 1
    if all(d >= 0 for d in flatten(layout.stride)):
        assert layout.cosize() == oracle.cosize()


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_natural_and_weak_coordinates_match_pycute(data):
    layout = data.draw(layouts)
    shape, stride = layout.shape, layout.stride
    for index in range(layout.size()):
        natural = idx2crd(index, shape)
        assert natural == pycute.idx2crd(index, shape)
        assert congruent(natural, shape)
        assert crd2idx(natural, shape) == index == pycute.crd2idx(natural, shape)
        assert layout(natural) == pycute.crd2idx(natural, shape, stride) == layout(index)
    index = data.draw(st.integers(0, layout.size() - 1))
    weak = data.draw(weak_coordinate(shape, index))
    assert crd2idx(weak, shape, stride) == pycute.crd2idx(weak, shape, stride) == layout(index)
    assert crd2idx(weak, shape) == index


# pycute needs |S| >= B, and recurses forever on S == 0 (shiftr(a, 0) calls shiftl(a, 0) and back).
swizzles = st.tuples(st.integers(0, 4), st.integers(0, 6), st.integers(-8, 8)).filter(
    lambda bms: abs(bms[2]) >= bms[0] and bms[2] != 0)


@settings(max_examples=400, deadline=None)
@given(swizzles, st.lists(st.integers(-(1 << 20), 1 << 20), min_size=20, max_size=20))
def test_swizzle_matches_pycute(bms, offsets):
    ours, oracle = Swizzle(*bms), pycute.Swizzle(*bms)
    assert [ours(x) for x in offsets] == [oracle(x) for x in offsets]
    assert [ours(x) for x in range(256)] == [oracle(x) for x in range(256)]


@settings(max_examples=400, deadline=None)
@given(swizzles, st.integers(0, 4096), layouts)
def test_composed_layout_matches_pycute(bms, offset, layout):
    ours = ComposedLayout(Swizzle(*bms), offset, layout)
    oracle = pycute.ComposedLayout(pycute.Swizzle(*bms), offset, pycute.Layout(layout.shape, layout.stride))
    assert ours.size() == layout.size()
    images = [ours(i) for i in range(ours.size())]
    assert images == [oracle(i) for i in range(ours.size())]
    assert ours.cosize() == max(images) + 1


def basis_strides(shape, modes):
    """Strides congruent with shape: each leaf c@m (m from `modes`) or 0."""
    leaf = st.one_of(st.builds(Basis, st.integers(-4, 4), st.sampled_from(modes)), st.just(0))
    return like(shape, leaf)


@settings(max_examples=300, deadline=None)
@given(small_shapes.flatmap(lambda s: st.tuples(st.just(s), basis_strides(s, [0, 1, 2]))))
def test_basis_layout_is_one_integer_layout_per_component(shape_and_stride):
    """Component k of a basis-stride layout is the integer layout whose strides are the c of c@k."""
    shape, stride = shape_and_stride
    layout = Layout(shape, stride)
    bases = [d for d in flatten(stride) if isinstance(d, Basis)]
    width = 1 + max((d.mode for d in bases), default=-1)
    components = [pycute.Layout(shape, component_strides(stride, k)) for k in range(width)]
    for i in range(layout.size()):
        value = layout(i)
        if not bases:
            assert value == 0
            continue
        assert value == tuple(component(i) for component in components)


def component_strides(stride, k):
    if isinstance(stride, tuple):
        return tuple(component_strides(d, k) for d in stride)
    return stride.coefficient if isinstance(stride, Basis) and stride.mode == k else 0


# --- Round trip -----------------------------------------------------------------------------------------

def hierarchical_bases(shape):
    """Bases whose paths all have length 2, so none is a proper prefix of another."""
    leaf = st.builds(Basis, st.integers(-3, 9),
                     st.tuples(st.integers(0, 3), st.integers(0, 3)))
    return like(shape, st.one_of(leaf, st.just(0)))


any_layouts = st.one_of(
    layouts,
    small_shapes.flatmap(lambda s: basis_strides(s, [0, 1, 2, 3]).map(lambda d: Layout(s, d))),
    small_shapes.flatmap(lambda s: hierarchical_bases(s).map(lambda d: Layout(s, d))),
    st.builds(ComposedLayout, swizzles.map(lambda bms: Swizzle(*bms)), st.integers(0, 1 << 12), layouts),
)


@settings(max_examples=800, deadline=None)
@given(any_layouts)
def test_notation_round_trip(layout):
    text = layout.notation()
    assert " " not in text.replace(" o ", "")
    assert parse_layout(text) == layout
    static = re.sub(r"(?<![@\d_-])(-?\d+)", r"_\1", text)      # CuTe's static ints: _8, _-1, _1@0
    cute_style = static.replace("Sw<", "Swizzle<").replace(",", ", ")
    assert parse_layout(cute_style) == layout
