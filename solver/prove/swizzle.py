"""Properties of CuTe's Swizzle<B,M,S> over whole parameter ranges (B, M, S symbolic at once).

Bijectivity and involution are different properties: S = 0 breaks the first, 0 < |S| < B only the
second. Addresses range below 2^20 so that no shifted bit leaves the 32-bit vector (B + M + |S| <= 20).
"""
from __future__ import annotations

import z3

from spec.cute.swizzle import Swizzle

from solver.model.bitvec import in_range, var
from solver.prove.catalogue import Query, prop
from solver.model.swizzle import cute_swizzle

DOMAIN = "B in [0,4], M in [0,8], S in [-8,8]; x, y in [0, 2^20)"
SOURCE = "cute/swizzle.hpp; REFERENCE.md 1"


def _parameters():
    B, M, S, x, y = var("B"), var("M"), var("S"), var("x"), var("y")
    ranges = [in_range(B, 0, 5), in_range(M, 0, 9), S >= -8, S <= 8, in_range(x, 0, 1 << 20),
              in_range(y, 0, 1 << 20)]
    return B, M, S, x, y, ranges


def _bijective_query(condition: bool) -> Query:
    B, M, S, x, y, ranges = _parameters()
    assumptions = ranges + ([z3.Or(S != 0, B == 0)] if condition else [])
    claim = z3.Implies(x != y, cute_swizzle(x, B, M, S) != cute_swizzle(y, B, M, S))
    return Query({"B": B, "M": M, "S": S, "x": x, "y": y}, assumptions, claim, signed=("S",))


def _replay_collision(c: dict) -> bool:
    sw = Swizzle(c["B"], c["M"], c["S"])
    return c["x"] != c["y"] and sw(c["x"]) == sw(c["y"])


@prop("swizzle.cute.bijective", "Swizzle<B,M,S> is injective when S != 0 or B = 0.",
      DOMAIN + "; S != 0 or B = 0", SOURCE, "proved", _replay_collision, "swizzle.cute")
def bijective():
    return _bijective_query(condition=True)


@prop("swizzle.cute.bijective.any_shift", "Swizzle<B,M,S> is injective for every S (false: S = 0 "
      "XORs bits with themselves).", DOMAIN, SOURCE, "refuted", _replay_collision, "swizzle.cute")
def bijective_any_shift():
    return _bijective_query(condition=False)


def _involution_query(condition: bool) -> Query:
    B, M, S, x, _, ranges = _parameters()
    assumptions = ranges + ([z3.Or(S >= B, -S >= B)] if condition else [])
    claim = cute_swizzle(cute_swizzle(x, B, M, S), B, M, S) == x
    return Query({"B": B, "M": M, "S": S, "x": x}, assumptions, claim, signed=("S",))


def _replay_not_involution(c: dict) -> bool:
    sw = Swizzle(c["B"], c["M"], c["S"])
    return sw(sw(c["x"])) != c["x"]


@prop("swizzle.cute.involution", "Swizzle<B,M,S> is its own inverse when |S| >= B.",
      DOMAIN + "; |S| >= B", SOURCE, "proved", _replay_not_involution, "swizzle.cute")
def involution():
    return _involution_query(condition=True)


@prop("swizzle.cute.involution.any_shift", "Swizzle<B,M,S> is its own inverse for every S (false: "
      "0 < |S| < B overlaps source and target bits).", DOMAIN, SOURCE, "refuted",
      _replay_not_involution, "swizzle.cute")
def involution_any_shift():
    return _involution_query(condition=False)
