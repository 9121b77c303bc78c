"""spec.cute's fast paths (spec/fast/cute_notation.py, spec/fast/cute_layout.py) against their references:
notation.parse_layout (which reads the fuzzers' plain texts without the character parser) against
parse_layout_by_characters, and layout.evaluate (a loop over each mode's leaves) against Layout.__call__: same values, same errors, on hypothesis-drawn
texts (well-formed and not), hypothesis-drawn layouts and coordinates (nested modes, negative and zero
strides, coordinates out of range and negative, basis strides), and every layout the desc fuzzer writes
on each arch, evaluated at every element of its tile."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from spec.cute import notation
from spec.cute.layout import Basis, Layout, evaluate
from spec.fast import cute_notation
from solver.fuzz import engine

ARCHES = ("sm90", "sm100", "sm103")


def _outcome(function, *args):
    """("value", result) or ("error", its type and message)."""
    try:
        return "value", function(*args)
    except Exception as error:          # the same errors, word for word, are part of the equality
        return "error", (type(error), str(error))


def _assert_parse_same(text) -> None:
    reference = _outcome(notation.parse_layout_by_characters, text)
    assert _outcome(notation.parse_layout, text) == reference, text


def _fuzz_layouts(arch: str) -> list:
    return [r["case"] for r in engine.generate("desc", arch, frozenset(), 60, 5, engine.Stats())]


@pytest.mark.parametrize("arch", ARCHES)
def test_fuzz_layouts_parse_and_evaluate_as_the_references(arch):
    cases = _fuzz_layouts(arch)
    assert cases
    for case in cases:
        text = case["layout"]
        assert cute_notation._parse_plain(text) is not None, text       # the fast path reads every one
        _assert_parse_same(text)
        layout = notation.parse_layout(text)
        inner = getattr(layout, "layout", layout)
        for mn in range(case["mn"]):
            for k in range(case["k"]):
                assert evaluate(inner, mn, k) == inner(mn, k), (text, mn, k)


def _int_tuples(leaf):
    return st.recursive(leaf, lambda children: st.lists(children, min_size=1, max_size=3).map(tuple),
                        max_leaves=8)


def _tuple_text(t) -> str:
    return f"({','.join(_tuple_text(c) for c in t)})" if isinstance(t, tuple) else str(t)


_SWIZZLES = st.one_of(st.just(""), st.tuples(st.integers(0, 4), st.integers(0, 5), st.integers(0, 5)).map(
    lambda b: f"Sw<{b[0]},{b[1]},{b[2]}> o "))


@settings(max_examples=400, deadline=None)
@given(_SWIZZLES, _int_tuples(st.integers(0, 40)), _int_tuples(st.integers(0, 5000)))
def test_well_formed_texts_parse_as_the_reference(swizzle, shape, stride):
    _assert_parse_same(f"{swizzle}{_tuple_text(shape)}:{_tuple_text(stride)}")


@settings(max_examples=600, deadline=None)
@given(_SWIZZLES, st.text(alphabet="0123456789(),:", max_size=30),
       st.sampled_from(("", " ", "_", "-", "\n", "@0", "0" * 25)))
def test_any_text_parses_as_the_reference(swizzle, body, extra):
    _assert_parse_same(swizzle + body)
    _assert_parse_same(swizzle + body + extra)
    _assert_parse_same(extra + body)


def test_deep_nesting_and_long_numbers_parse_as_the_reference():
    for depth in (62, 63, 64, 65, 66, 80):
        _assert_parse_same("(" * depth + "2" + ")" * depth + ":" + "(" * depth + "1" + ")" * depth)
    for digits in (19, 20, 21, 5000):
        _assert_parse_same(f"(8,{'1' * digits}):(1,8)")
    _assert_parse_same(None)
    _assert_parse_same(12)


@settings(max_examples=600, deadline=None)
@given(st.data())
def test_evaluate_is_the_layout(data):
    shape = data.draw(st.lists(_int_tuples(st.integers(1, 6)), min_size=1, max_size=3).map(tuple))
    stride = tuple(_same_structure(data, mode) for mode in shape)
    layout = Layout(shape, stride)
    coord = data.draw(st.lists(st.integers(-40, 400), min_size=1, max_size=4))
    assert _outcome(evaluate, layout, *coord) == _outcome(layout, *coord)
    size = layout.size()
    for index in range(min(size, 64)):          # every in-range coordinate of a rank-2 layout
        if len(shape) == 2:
            i, j = index % _size(shape[0]), index // _size(shape[0])
            assert evaluate(layout, i, j) == layout(i, j)


def _size(mode) -> int:
    return Layout(mode).size()


def _same_structure(data, mode):
    if isinstance(mode, tuple):
        return tuple(_same_structure(data, child) for child in mode)
    return data.draw(st.integers(-50, 50))


def test_evaluate_falls_back_where_the_fast_path_does_not_apply():
    basis = Layout((4, 8), (Basis(1, (0,)), Basis(1, (1,))))
    assert evaluate(basis, 3, 5) == basis(3, 5) == (3, 5)
    flat = Layout(8, 2)
    assert evaluate(flat, 5) == flat(5) == 10
    nested = Layout(((2, 3), 4), ((1, 2), 6))
    assert evaluate(nested, (1, 2), 3) == nested((1, 2), 3) == 23
    assert _outcome(evaluate, nested, True, 1) == _outcome(nested, True, 1)
