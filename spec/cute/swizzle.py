"""CuTe's Swizzle<B,M,S> functor (CUTLASS cute/swizzle.hpp).

    yyy_mask = ((1 << B) - 1) << (M + max(0, S))
    f(x)     = x ^ ((x & yyy_mask) >> S)          (a negative S shifts left)

B bits are XORed into the B bits that start M (+ max(0,-S)) bits up. Bijectivity and involution are
different properties and are kept apart here: C++ CuTe requires |S| >= B (which makes f an involution),
while the formula is a bijection for every S != 0 and for B = 0.
"""
from __future__ import annotations

from dataclasses import dataclass

from spec.rule import SpecError, rule

SWIZZLE_FORMULA = rule(
    "swizzle.cute.formula", "CUTLASS cute/swizzle.hpp (Swizzle<BBits, MBase, SShift>)",
    "Swizzle<B,M,S>(x) = x ^ ((x & (((1<<B)-1) << (M+max(0,S)))) >> S); negative S shifts left.")


SWIZZLE_BITS = 64    # the widest offset a swizzle acts on (C++ CuTe's stop at 31 bits: int masks)


@dataclass(frozen=True)
class Swizzle:
    bits: int    # B: how many bits are XORed
    base: int    # M: how many least-significant bits stay constant
    shift: int   # S: distance from the source (yyy) bits down to the target (zzz) bits

    def __post_init__(self):
        # Only what makes the formula meaningless is malformed; |S| < B is legal to build (so that the
        # non-bijective and non-involutive cases can be studied) and is reported by the domain rule.
        if self.bits < 0:
            raise SpecError("swizzle.B", self.bits, "must be >= 0", SWIZZLE_DOMAIN.id)
        if self.base < 0:
            raise SpecError("swizzle.M", self.base, "must be >= 0", SWIZZLE_DOMAIN.id)
        # Every bit the formula reads or writes lies below B + M + |S| (yyy_mask, zzz_mask). C++ CuTe's
        # masks are int constants (cute/swizzle.hpp: bit_msk, yyy_msk, zzz_msk), so no C++ swizzle
        # reaches past bit 31; past SWIZZLE_BITS the masks would have as many bits as the field's value.
        for name, value in (("swizzle.B", self.bits), ("swizzle.M", self.base), ("swizzle.S", self.shift)):
            if abs(value) > SWIZZLE_BITS:
                raise SpecError(name, value, f"must be at most {SWIZZLE_BITS} in magnitude: the swizzle's bits "
                                f"lie in an offset of {SWIZZLE_BITS} bits (B + M + |S| <= {SWIZZLE_BITS})",
                                SWIZZLE_DOMAIN.id)
        if self.bits + self.base + abs(self.shift) > SWIZZLE_BITS:
            raise SpecError("swizzle", self.notation(), f"B + M + |S| = {self.bits + self.base + abs(self.shift)}"
                            f": the swizzle's bits lie in an offset of {SWIZZLE_BITS} bits (B + M + |S| <= "
                            f"{SWIZZLE_BITS})", SWIZZLE_DOMAIN.id)

    @property
    def yyy_mask(self) -> int:
        """The source bits, which are shifted down by S and XORed into the target bits."""
        return ((1 << self.bits) - 1) << (self.base + max(0, self.shift))

    @property
    def zzz_mask(self) -> int:
        """The target bits, which change."""
        return ((1 << self.bits) - 1) << (self.base - min(0, self.shift))

    def __call__(self, offset: int) -> int:
        moved = offset & self.yyy_mask
        moved = moved >> self.shift if self.shift >= 0 else moved << -self.shift
        return offset ^ moved

    @property
    def period(self) -> int:
        """Size of the block inside which the pattern lives: 2^(B + M + |S|)."""
        return 1 << (self.bits + self.base + abs(self.shift))

    def is_identity(self) -> bool:
        return self.bits == 0

    def notation(self) -> str:
        return f"Sw<{self.bits},{self.base},{self.shift}>"

    def __str__(self) -> str:
        return self.notation()


SWIZZLE_DOMAIN = rule(
    "swizzle.cute.domain", "CUTLASS cute/swizzle.hpp (its static_asserts on BBits, MBase, SShift)",
    "C++ CuTe accepts Swizzle<B,M,S> only with B >= 0, M >= 0 and |S| >= B. B < 0, M < 0 and "
    "B + M + |S| > 64 (bits past a 64-bit offset; C++ CuTe's int masks stop at 31) are refused as "
    "malformed; |S| < B is reported.",
    subject="swizzle")


@SWIZZLE_DOMAIN.checker
def _check_domain(sw: Swizzle):
    if abs(sw.shift) < sw.bits:
        return f"{sw.notation()}: |S|={abs(sw.shift)} < B={sw.bits}; C++ CuTe rejects it"
    return None


_SWIZZLE_TEXT = r"S(?:wizzle|w)?<\s*(-?\d+)\s*,\s*(-?\d+)\s*,\s*(-?\d+)\s*>"    # Sw<, Swizzle<, S< (the CuTe DSL)


def refuse_outside_cute(text) -> None:
    """SpecError naming rule swizzle.cute.domain for a layout text whose swizzle C++ CuTe refuses (|S| < B:
    cute/swizzle.hpp's static_assert; pycute asserts it too). What users type (--layout, and the Python
    API's layout text) is refused so; the engines still take such swizzles, which clear bits, for their
    own tests."""
    import re
    if not isinstance(text, str):
        return
    for m in re.finditer(_SWIZZLE_TEXT, text):
        bits, shift = int(m.group(1)), int(m.group(3))
        if 0 <= bits <= 64 and abs(shift) < bits:      # (sizes past 64 bits are the parser's to refuse)
            raise SpecError("swizzle", m.group(0), f"|S| = {abs(shift)} < B = {bits}: C++ CuTe refuses this "
                            "swizzle (cute/swizzle.hpp static_assert)", SWIZZLE_DOMAIN.id)


def is_bijective(sw: Swizzle) -> bool:
    """Whether x -> sw(x) is a bijection of the non-negative integers (SWIZZLE_BIJECTIVE)."""
    return sw.bits == 0 or sw.shift != 0


def is_involution(sw: Swizzle) -> bool:
    """Whether sw(sw(x)) == x for all x (SWIZZLE_INVOLUTION)."""
    return sw.bits == 0 or abs(sw.shift) >= sw.bits


SWIZZLE_BIJECTIVE = rule(
    "swizzle.cute.bijective", "CUTLASS cute/swizzle.hpp (a property of its formula)",
    "Swizzle<B,M,S> is a bijection of the integers iff B == 0 or S != 0 (S == 0 XORs bits with "
    "themselves and clears them).", subject="swizzle")


@SWIZZLE_BIJECTIVE.checker
def _check_bijective(sw: Swizzle):
    if not is_bijective(sw):
        return f"{sw.notation()} with S=0 maps x and x ^ (bits {sw.yyy_mask:#x}) to the same value"
    return None


SWIZZLE_INVOLUTION = rule(
    "swizzle.cute.involution", "CUTLASS cute/swizzle.hpp (a property of its formula)",
    "Swizzle<B,M,S> is its own inverse iff B == 0 or |S| >= B (the source and target bit ranges do "
    "not overlap).", subject="swizzle")


@SWIZZLE_INVOLUTION.checker
def _check_involution(sw: Swizzle):
    if not is_involution(sw):
        return f"{sw.notation()}: source and target bits overlap, so applying it twice is not the identity"
    return None


def brute_force_is_bijective(sw: Swizzle) -> bool:
    """Enumerate one period (the swizzle never moves values across periods)."""
    images = {sw(x) for x in range(sw.period)}
    return len(images) == sw.period and all(0 <= y < sw.period for y in images)


def brute_force_is_involution(sw: Swizzle) -> bool:
    return all(sw(sw(x)) == x for x in range(sw.period))


# --- The byte-address swizzles that shared-memory descriptors name (PTX ISA 9.7.16.10.6; CUTLASS) ------
# In shared memory the swizzle acts on BYTE addresses. M = 4 keeps 16-byte chunks intact (5 for 32-byte
# atomicity) and M + S = 7 takes the XOR pattern from the 128-byte row index.
DESCRIPTOR_SWIZZLES = {
    "none": Swizzle(0, 4, 3),
    "32B": Swizzle(1, 4, 3),          # addr[4]   ^= addr[7];    repeats every 256 B
    "64B": Swizzle(2, 4, 3),          # addr[5:4] ^= addr[8:7];  repeats every 512 B
    "128B": Swizzle(3, 4, 3),         # addr[6:4] ^= addr[9:7];  repeats every 1024 B
    "128B_atom32B": Swizzle(2, 5, 2),  # addr[6:5] ^= addr[8:7]; repeats every 512 B (sm100 only)
}
DESCRIPTOR_SWIZZLE_BYTES = rule(
    "swizzle.descriptor.byte_functions", "PTX ISA 9.7.16.3.3, 9.7.16.10.6 (swizzle atoms); CUTLASS "
    "cute/atom/mma_traits_sm90_gmma.hpp, mma_traits_sm100.hpp (Layout_*_SW*_Atom: Swizzle<3,4,3> ...)",
    "Descriptor swizzles act on byte addresses: none=Sw<0,4,3>, 32B=Sw<1,4,3>, 64B=Sw<2,4,3>, "
    "128B=Sw<3,4,3>, 128B_atom32B=Sw<2,5,2>.")


def pattern_rows(swizzle_name: str) -> int:
    """How many 128-byte lines one descriptor swizzle pattern spans before it repeats: 8 for 128B,
    4 for 64B and 128B_atom32B, 2 for 32B, 1 for none. (M + S = 7 for all of them, so the XOR
    pattern is indexed by the 128-byte line, address bits [7, 7+B).)"""
    return 1 << DESCRIPTOR_SWIZZLES[swizzle_name].bits


def repeat_bytes(swizzle_name: str) -> int:
    """The repeat boundary (PTX Table 41): 1024 B for 128B, 512 for 64B and 128B_atom32B, 256 for
    32B; 128 (one line) for none."""
    return 128 * pattern_rows(swizzle_name)
