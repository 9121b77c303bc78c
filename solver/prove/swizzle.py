"""Properties of CuTe's Swizzle<B,M,S> over whole parameter ranges (B, M, S symbolic at once).

Bijectivity and involution are different properties: S = 0 breaks the first, 0 < |S| < B only the
second. Addresses range below 2^20 so that no shifted bit leaves the 32-bit vector (B + M + |S| <= 20).
"""
from __future__ import annotations

import z3

from spec.cute.swizzle import Swizzle

from solver.model.bitvec import bv, in_range, var
from solver.prove.property import Query, prop
from solver.model.swizzle import cute_swizzle

DOMAIN = "B in [0,4], M in [0,8], S in [-8,8]; x, y in [0, 2^20)"
SOURCE = "CUTLASS cute/swizzle.hpp (Swizzle<BBits, MBase, SShift>)"
BIJECTIVE_RULES = ("swizzle.cute.bijective", "swizzle.cute.formula")
INVOLUTION_RULES = ("swizzle.cute.involution", "swizzle.cute.formula")


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


def _with_and_without(id: str, claim: str, condition: str, why_false: str, query, replay, rules: tuple):
    """The claim under its condition on S (proved) and, as `id`.any_shift, for every S (refuted)."""
    prop(id, f"Swizzle<B,M,S> {claim} when {condition}.", f"{DOMAIN}; {condition}", SOURCE, "proved",
         replay, "swizzle.cute", rules=rules)(lambda: query(condition=True))
    prop(f"{id}.any_shift", f"Swizzle<B,M,S> {claim} for every S (false: {why_false}).", DOMAIN, SOURCE,
         "refuted", replay, "swizzle.cute", rules=rules)(lambda: query(condition=False))


_with_and_without("swizzle.cute.bijective", "is injective", "S != 0 or B = 0", "S = 0 XORs bits with themselves",
                  _bijective_query, _replay_collision, BIJECTIVE_RULES)


def _involution_query(condition: bool) -> Query:
    B, M, S, x, _, ranges = _parameters()
    assumptions = ranges + ([z3.Or(S >= B, -S >= B)] if condition else [])
    claim = cute_swizzle(cute_swizzle(x, B, M, S), B, M, S) == x
    return Query({"B": B, "M": M, "S": S, "x": x}, assumptions, claim, signed=("S",))


def _replay_not_involution(c: dict) -> bool:
    sw = Swizzle(c["B"], c["M"], c["S"])
    return sw(sw(c["x"])) != c["x"]


_with_and_without("swizzle.cute.involution", "is its own inverse", "|S| >= B",
                  "0 < |S| < B overlaps source and target bits", _involution_query, _replay_not_involution,
                  INVOLUTION_RULES)


# --- swizzle.cute.formula: the model against CuTe's definition, bit by bit --------------------------------
# Bijectivity and involution hold for any consistent shift, so they cannot notice a wrong shift amount or
# direction (the negative-S path especially). This compares the model with the definition spelled out on
# bit fields: S >= 0 moves bits [M+S, M+S+B) down to [M, M+B); S < 0 moves bits [M, M+B) up to [M-S, M-S+B).
FORMULA_GRID = [(B, M, S) for B in (1, 2, 3) for M in (0, 3, 4) for S in (-6, -4, -3, -1, 1, 3, 4, 6)]


def _bit_field_definition(x, B, M, S):
    mask = (bv(1) << B) - bv(1) if z3.is_expr(B) else bv((1 << B) - 1)
    down = z3.LShR(x, M + S) & mask
    up = z3.LShR(x, M) & mask
    if z3.is_expr(S):
        return x ^ z3.If(S >= 0, down << M, up << (M - S))
    return x ^ ((down << M) if S >= 0 else (up << (M - S)))


def _formula_query() -> Query:
    B, M, S, x, _, ranges = _parameters()
    symbolic = cute_swizzle(x, B, M, S) == _bit_field_definition(x, B, M, S)
    concrete = [cute_swizzle(x, b, m, s) == _bit_field_definition(x, b, m, s) for b, m, s in FORMULA_GRID]
    return Query({"B": B, "M": M, "S": S, "x": x}, ranges, z3.And(symbolic, *concrete), signed=("S",))


def _replay_formula(c: dict) -> bool:
    """spec/'s Swizzle confirms when it, too, differs from the bit-field definition (at the counterexample's
    parameters or at one of the grid's)."""
    def definition(x, B, M, S):
        return x ^ ((((x >> (M + S)) & ((1 << B) - 1)) << M) if S >= 0 else (((x >> M) & ((1 << B) - 1)) << (M - S)))
    cases = [(c["B"], c["M"], c["S"])] + FORMULA_GRID
    return any(Swizzle(b, m, s)(c["x"]) != definition(c["x"], b, m, s) for b, m, s in cases)


prop("swizzle.cute.formula", "Swizzle<B,M,S> moves the B bits at M + max(0, S) by S (down for S >= 0, up by "
     "-S for S < 0) and XORs them in, for symbolic parameters and for a grid of concrete ones with S of both "
     "signs.", DOMAIN + f"; and the {len(FORMULA_GRID)} concrete (B, M, S) of B in 1..3, M in {{0, 3, 4}}, "
     "S in {-6, -4, -3, -1, 1, 3, 4, 6}", SOURCE, "proved", _replay_formula, "swizzle.cute",
     rules=("swizzle.cute.formula",))(_formula_query)
