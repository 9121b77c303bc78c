"""Words whose bits are partly known: the values the PTX evaluator computes.

A `Bits` is a `width`-bit word with a mask of the bits that are known and their values. Arithmetic on
them keeps every bit it can prove: a descriptor built as `or.b64 d, start, 0x4000004000000000` from an
unknown start address shifted into 14 bits still has its LBO, SBO and swizzle bits known.

`shared_generic` marks a generic address of a shared-memory location whose shared address is the word's
value (PTX 9.7.9.20 cvta: the generic address itself depends on the shared window, which the PTX does
not say). Such a word survives add/sub of a plain word (pointer arithmetic) and converts back exactly
with cvta.to.shared; any other use makes it unknown.
"""
from __future__ import annotations

from dataclasses import dataclass


def mask_of(width: int) -> int:
    return (1 << width) - 1


@dataclass(frozen=True)
class Bits:
    width: int
    value: int          # the known bits' values; unknown bits are 0 here
    known: int          # 1 where the bit is known
    shared_generic: bool = False

    @property
    def is_known(self) -> bool:
        return self.known == mask_of(self.width)

    @property
    def low(self) -> int:
        """The word with every unknown bit 0 (the smallest value it can hold, unsigned)."""
        return self.value

    @property
    def high(self) -> int:
        """The word with every unknown bit 1."""
        return self.value | (~self.known & mask_of(self.width))

    def bit(self, index: int):
        """Bit `index`: 0, 1 or None when unknown."""
        if not (self.known >> index) & 1:
            return None
        return (self.value >> index) & 1

    def signed(self) -> int:
        """The value of a fully known word read as two's complement."""
        return self.value - (1 << self.width) if self.value >> (self.width - 1) & 1 else self.value

    def hex(self) -> str:
        """0x and one hex digit per nibble, '?' for a nibble with an unknown bit."""
        digits = []
        for nibble in reversed(range((self.width + 3) // 4)):
            part = (self.known >> (4 * nibble)) & 0xF
            full = 0xF if 4 * nibble + 4 <= self.width else mask_of(self.width - 4 * nibble)
            digits.append("%x" % ((self.value >> (4 * nibble)) & 0xF) if part == full else "?")
        return "0x" + "".join(digits)


def const(value: int, width: int) -> Bits:
    return Bits(width, value & mask_of(width), mask_of(width))


def unknown(width: int) -> Bits:
    return Bits(width, 0, 0)


def make(width: int, value: int, known: int) -> Bits:
    known &= mask_of(width)
    return Bits(width, value & known, known)


def plain(word: Bits) -> Bits:
    """The word as a number: a generic shared address has no known number."""
    return unknown(word.width) if word.shared_generic else word


def resize(word: Bits, width: int, signed: bool = False) -> Bits:
    """Truncate, or extend with zeros (or copies of the sign bit when `signed`)."""
    word = plain(word)
    if width <= word.width:
        return make(width, word.value, word.known)
    added = mask_of(width) & ~mask_of(word.width)
    if not signed:
        return make(width, word.value, word.known | added)
    sign = word.bit(word.width - 1)
    if sign is None:
        return make(width, word.value, word.known)
    return make(width, word.value | (added if sign else 0), word.known | added)


def join(a: Bits, b: Bits) -> Bits:
    """What is known of a value that is a or b (two paths meet): the bits both know alike."""
    if a == b:
        return a
    width = max(a.width, b.width)
    if a.shared_generic != b.shared_generic:
        return unknown(width)
    known = a.known & b.known & ~(a.value ^ b.value)
    return Bits(width, a.value & known, known & mask_of(width), a.shared_generic)


# --- bitwise -------------------------------------------------------------------------------------------
def and_(a: Bits, b: Bits) -> Bits:
    a, b = plain(a), plain(b)
    zeros = (a.known & ~a.value) | (b.known & ~b.value)
    ones = a.known & b.known & a.value & b.value
    return make(a.width, ones, zeros | ones)


def or_(a: Bits, b: Bits) -> Bits:
    a, b = plain(a), plain(b)
    ones = (a.known & a.value) | (b.known & b.value)
    zeros = a.known & b.known & ~a.value & ~b.value
    return make(a.width, ones, zeros | ones)


def xor(a: Bits, b: Bits) -> Bits:
    a, b = plain(a), plain(b)
    known = a.known & b.known
    return make(a.width, a.value ^ b.value, known)


def not_(a: Bits) -> Bits:
    a = plain(a)
    return make(a.width, ~a.value, a.known)


# --- arithmetic ----------------------------------------------------------------------------------------
def _add(a: Bits, b: Bits, carry_in: int) -> Bits:
    """a + b + carry_in. The carry into bit i only grows with the low i bits of a and b, so it is known
    when the sums with every unknown bit 0 and with every unknown bit 1 carry alike into bit i."""
    width = a.width
    low_sum = a.low + b.low + carry_in
    high_sum = a.high + b.high + carry_in
    carries_low = low_sum ^ a.low ^ b.low
    carries_high = high_sum ^ a.high ^ b.high
    known = a.known & b.known & ~(carries_low ^ carries_high)
    return make(width, low_sum, known)


def add(a: Bits, b: Bits) -> Bits:
    if a.shared_generic and b.shared_generic:
        return unknown(a.width)
    tagged = a.shared_generic or b.shared_generic
    result = _add(_untagged(a), _untagged(b), 0)
    return Bits(result.width, result.value, result.known, tagged)


def sub(a: Bits, b: Bits) -> Bits:
    """a - b = a + ~b + 1 (a generic address less a number stays one)."""
    if b.shared_generic:
        return unknown(a.width)
    result = _add(_untagged(a), not_(b), 1)
    return Bits(result.width, result.value, result.known, a.shared_generic)


def _untagged(word: Bits) -> Bits:
    return Bits(word.width, word.value, word.known)


def _known_low_bits(word: Bits) -> int:
    """How many of the lowest bits are all known."""
    count = 0
    while count < word.width and (word.known >> count) & 1:
        count += 1
    return count


def _known_trailing_zeros(word: Bits) -> int:
    count = 0
    while count < word.width and (word.known >> count) & 1 and not (word.value >> count) & 1:
        count += 1
    return count


def mul(a: Bits, b: Bits, width: int) -> Bits:
    """The low `width` bits of a * b. The low n bits of a product depend on the low n bits of its
    factors alone, and a product has at least as many trailing zeros as its factors together."""
    a, b = plain(a), plain(b)
    if a.is_known and b.is_known:
        return const(a.value * b.value, width)
    low = min(_known_low_bits(a), _known_low_bits(b))
    zeros = min(width, _known_trailing_zeros(a) + _known_trailing_zeros(b))
    if zeros >= low:
        return make(width, 0, mask_of(zeros))
    return make(width, a.value * b.value, mask_of(low))


def shl(a: Bits, amount: Bits) -> Bits:
    """PTX shl: amounts past the width are clamped to the width (the result is 0)."""
    a = plain(a)
    if not amount.is_known:
        return unknown(a.width)
    n = min(amount.value, a.width)
    return make(a.width, a.value << n, (a.known << n) | mask_of(n))


def shr(a: Bits, amount: Bits, arithmetic: bool) -> Bits:
    """PTX shr: .s types fill with the sign bit, .u/.b with zeros; amounts are clamped to the width."""
    a = plain(a)
    if not amount.is_known:
        return unknown(a.width)
    n = min(amount.value, a.width)
    filled = mask_of(a.width) & ~mask_of(a.width - n)
    value, known = a.value >> n, a.known >> n
    if not arithmetic:
        return make(a.width, value, known | filled)
    sign = a.bit(a.width - 1)
    if sign is None:
        return make(a.width, value, known & ~filled)
    return make(a.width, value | (filled if sign else 0), known | filled)


def bit_field_extract(a: Bits, position: Bits, length: Bits, signed: bool) -> Bits:
    """PTX bfe (9.7.1.18): d[i] = a[pos + i] for i < len and pos + i <= msb, else the sign bit (.s:
    a[min(pos + len - 1, msb)]) or 0 (.u); pos and len are their operands' low 8 bits."""
    a = plain(a)
    if not (position.is_known and length.is_known):
        return unknown(a.width)
    pos, size = position.value & 0xFF, length.value & 0xFF
    msb = a.width - 1
    taken = max(0, min(size, msb - pos + 1)) if pos <= msb else 0
    value, known = (a.value >> pos) & mask_of(taken), (a.known >> pos) & mask_of(taken)
    fill = mask_of(a.width) & ~mask_of(taken)
    if not signed or size == 0:
        return make(a.width, value, known | fill)
    sign = a.bit(min(pos + size - 1, msb))
    if sign is None:
        return make(a.width, value, known)
    return make(a.width, value | (fill if sign else 0), known | fill)


def bit_field_insert(field: Bits, base: Bits, position: Bits, length: Bits) -> Bits:
    """PTX bfi (9.7.1.19): base with bits [pos, pos + len) replaced by field's low bits (clipped at the
    word's end)."""
    field, base = plain(field), plain(base)
    if not (position.is_known and length.is_known):
        return unknown(base.width)
    pos, size = position.value & 0xFF, length.value & 0xFF
    if pos >= base.width or size == 0:
        return base
    size = min(size, base.width - pos)
    window = mask_of(size) << pos
    value = (base.value & ~window) | ((field.value << pos) & window)
    known = (base.known & ~window) | ((field.known << pos) & window)
    return make(base.width, value, known)


def concat(parts: list) -> Bits:
    """mov.b64 d, {lo, hi} (and mov.b32 d, {a, b}): the first part is the lowest."""
    value = known = shift = 0
    for part in parts:
        part = plain(part)
        value |= part.value << shift
        known |= part.known << shift
        shift += part.width
    return make(shift, value, known)


def split(word: Bits, widths: list) -> list:
    """mov.b64 {lo, hi}, d: the inverse of concat."""
    word = plain(word)
    parts, shift = [], 0
    for width in widths:
        parts.append(make(width, word.value >> shift, word.known >> shift))
        shift += width
    return parts
