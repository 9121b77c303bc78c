"""CuTe layout notation: reading `shape:stride` and `Sw<B,M,S> o [offset o] layout` text into the
layouts of spec/cute/layout.py (CuTe docs: 01_layout.md; 0z_tma_tensors.md for basis strides c@m).
"""
from __future__ import annotations

from typing import Any, Union

from spec import fast
from spec.cute.layout import NOTATION, Basis, ComposedLayout, Layout
from spec.cute.swizzle import Swizzle
from spec.rule import NUMBER_CHARACTERS, SpecError

_MAX_NESTING = 64  # far deeper than any real layout; keeps hostile input away from Python's recursion limit


class _Parser:
    """Recursive descent over the text; every failure names the position."""

    def __init__(self, text: str):
        self.text = text
        self.pos = 0

    def fail(self, expected: str) -> SpecError:
        found = repr(self.text[self.pos]) if self.pos < len(self.text) else "end of text"
        return SpecError("layout", self.text, f"expected {expected} at position {self.pos}, found {found}",
                         NOTATION.id)

    def skip_space(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self) -> str:
        self.skip_space()
        return self.text[self.pos:self.pos + 1]

    def accept(self, token: str) -> bool:
        self.skip_space()
        if self.text.startswith(token, self.pos):
            self.pos += len(token)
            return True
        return False

    def expect(self, token: str) -> None:
        if not self.accept(token):
            raise self.fail(repr(token))

    def integer(self, signed: bool = True) -> int:
        """[_][-]digits: CuTe prints static integers with a leading underscore (_8, _-1)."""
        self.skip_space()
        start = self.pos
        self.accept("_")
        number = self.pos
        if signed and self.text.startswith("-", self.pos):
            self.pos += 1
        digits = self.pos
        while self.pos < len(self.text) and self.text[self.pos] in "0123456789":
            self.pos += 1
        if self.pos == digits:
            self.pos = start
            raise self.fail("an integer")
        if self.pos - digits > NUMBER_CHARACTERS:     # as every number users write (spec.rule.parse_number)
            self.pos = digits
            raise self.fail(f"an integer of at most {NUMBER_CHARACTERS} digits")
        return int(self.text[number:self.pos])

    def stride_leaf(self) -> Union[int, Basis]:
        coefficient = self.integer()
        modes = []
        while self.accept("@"):
            modes.append(self.integer(signed=False))
        return Basis(coefficient, tuple(reversed(modes))) if modes else coefficient

    def int_tuple(self, leaf, nesting: int = 0) -> Any:
        if nesting > _MAX_NESTING:
            raise self.fail(f"at most {_MAX_NESTING} levels of parentheses")
        if not self.accept("("):
            return leaf()
        items = [self.int_tuple(leaf, nesting + 1)]
        while self.accept(","):
            items.append(self.int_tuple(leaf, nesting + 1))
        self.expect(")")
        return tuple(items)

    def layout(self) -> Layout:
        shape = self.int_tuple(self.integer)
        self.expect(":")
        stride = self.int_tuple(self.stride_leaf)
        return Layout(shape, stride)

    def swizzle(self) -> Swizzle:
        # C++ CuTe prints Sw<B,M,S> (Swizzle<B,M,S> in code); the CuTe DSL prints S<B,M,S>
        if not (self.accept("Swizzle") or self.accept("Sw") or self.accept("S")):
            raise self.fail("'Sw<', 'Swizzle<' or 'S<'")
        self.expect("<")
        bits = self.integer()
        self.expect(",")
        base = self.integer()
        self.expect(",")
        shift = self.integer()
        self.expect(">")
        return Swizzle(bits, base, shift)

    def offset(self) -> int:
        """An optional `offset o` before the layout; a leading integer followed by ':' is a shape."""
        start = self.pos
        if self.peek() not in ("_", "-") and not self.peek().isdigit():
            return 0
        value = self.integer()
        if self.accept("o"):
            return value
        self.pos = start
        return 0

    def any_layout(self) -> Union[Layout, ComposedLayout]:
        if self.peek() != "S":
            return self.layout()
        swizzle = self.swizzle()
        self.expect("o")
        offset = self.offset()
        return ComposedLayout(swizzle, offset, self.layout())

    def whole(self) -> Union[Layout, ComposedLayout]:
        result = self.any_layout()
        if self.peek():
            raise self.fail("end of text")
        return result


def parse_layout(text: str) -> Union[Layout, ComposedLayout]:
    """Parse CuTe notation: `((8,2),(4,4)):((4,32),(1,64))`, `Sw<3,4,3> o [offset o] shape:stride`,
    with strides possibly basis elements (`_1@0`). parse_layout_by_characters is the definition; while
    fast paths are on (spec.fast), the fuzzers' plain texts are read without it (spec.fast.cute_notation)."""
    return fast.fastest(parse_layout_by_characters)(text)


def parse_layout_by_characters(text: str) -> Union[Layout, ComposedLayout]:
    """parse_layout by recursive descent over the characters (_Parser): the reference."""
    if not isinstance(text, str):
        raise SpecError("layout", text, "a layout is written as text", NOTATION.id)
    parser = _Parser(text)
    try:
        return parser.whole()
    except SpecError as error:
        if error.field_name == "layout" and error.value == text:
            raise
        # A well-formed text that names a malformed layout or swizzle (non-congruent, B < 0, ...).
        what = "" if error.field_name == "layout" else f"{error.field_name}: "
        raise SpecError("layout", text, f"{what}{error.problem} (before position {parser.pos})",
                        NOTATION.id) from None
