"""Fast path of spec/cute/notation.py: the texts the fuzzers write, read without the character parser."""
from __future__ import annotations

import re
from typing import Any, Optional, Union

from spec import fast
from spec.cute import notation
from spec.cute.layout import ComposedLayout, Layout
from spec.cute.swizzle import Swizzle
from spec.rule import SpecError

_PLAIN_DIGITS = 20          # longer numbers are left to the reference (and Python's int() limit)
_PLAIN_TOKEN = re.compile(r"[0-9]+|[(),]")
_PLAIN_TEXT = re.compile(r"(?:Sw<([0-9]+),([0-9]+),([0-9]+)> o )?([0-9(),]+):([0-9(),]+)")


def _plain_int_tuple(text: str) -> Any:
    """An int_tuple of unsigned integers written without spaces or underscores, as notation._Parser reads
    it; None when the text is not one (the reference parser then says why)."""
    tokens = _PLAIN_TOKEN.findall(text)
    if sum(map(len, tokens)) != len(text) or any(len(token) > _PLAIN_DIGITS for token in tokens):
        return None
    stack = [[]]
    expect_item = True               # after '(' or ',' (or at the start): an integer or '('
    for token in tokens:
        if token == "(":
            if not expect_item or len(stack) >= notation._MAX_NESTING:       # deeper: the reference says why
                return None
            stack.append([])
            continue
        elif token == ",":
            if expect_item or len(stack) == 1:
                return None
            expect_item = True
            continue
        elif token == ")":
            if expect_item or len(stack) == 1:
                return None
            item = tuple(stack.pop())
            stack[-1].append(item)
        else:
            if not expect_item:
                return None
            stack[-1].append(int(token))
        expect_item = False
    if expect_item or len(stack) != 1 or len(stack[0]) != 1:
        return None
    return stack[0][0]


def _parse_plain(text: str) -> Optional[Union[Layout, ComposedLayout]]:
    """parse_layout of the texts the fuzzers write (`[Sw<B,M,S> o ]shape:stride`, unsigned integers, no
    spaces), without the character-by-character parser; None for any other text, and where the layout
    or swizzle is malformed (the reference then gives the error)."""
    match = _PLAIN_TEXT.fullmatch(text)
    if match is None:
        return None
    bits, base, shift, shape_text, stride_text = match.groups()
    shape, stride = _plain_int_tuple(shape_text), _plain_int_tuple(stride_text)
    if shape is None or stride is None:
        return None
    try:
        layout = Layout(shape, stride)
        return layout if bits is None else ComposedLayout(Swizzle(int(bits), int(base), int(shift)), 0, layout)
    except SpecError:
        return None


@fast.fast_version_of(notation.parse_layout_by_characters)
def parse_layout(text: str) -> Union[Layout, ComposedLayout]:
    """parse_layout_by_characters, with the fuzzers' plain texts read by _parse_plain (any other text, and
    any it cannot read, by the reference). tests/spec_tests/fast/test_cute_fast.py checks the two equal."""
    plain = _parse_plain(text) if isinstance(text, str) else None
    return plain if plain is not None else notation.parse_layout_by_characters(text)
