"""Properties of the TMA swizzle modes (PTX 5.5.7, seed 004), over the Z3 model of solver/tma_model.py.

For every mode:
  swizzle.tma.table_equals_formula.<MODE>  the seed's table equals the claimed XOR formula, every address
  swizzle.tma.bijective.<MODE>             the mode permutes the bytes of each aligned repeat block
plus one deliberately false claim, expected "refuted":
  swizzle.tma.table_equals_formula.128B_ATOM_32B_FLIP_8B_without_flip
                                           the flip sub-mode against the plain Sw<2,5,2> chunk formula

Every counterexample is replayed through spec.tma_swizzle (the concrete executor) before it counts.
"""
from __future__ import annotations

import z3

from spec import tma_swizzle as spec_tma
from spec.swizzle import Swizzle

from . import tma_model as model
from .bitvec import var
from .properties import Query, prop

FAMILY = "swizzle.tma"
SOURCE = "PTX 5.5.7 (seed 004)"
ADDRESS_DOMAIN = ("every 32-bit shared-memory byte address (0 <= address < 2^32); the table row is "
                  "chosen by the absolute address, (address >> 7) mod rows")
PAIR_DOMAIN = ("every pair of 32-bit shared-memory byte addresses a, b (0 <= a, b < 2^32); the table "
               "row is chosen by the absolute address")


def _spec_formula(triples):
    """The triples as spec/ Swizzle functors, composed left to right."""
    functors = [Swizzle(B, M, S) for B, M, S in triples]

    def apply(address: int) -> int:
        for functor in functors:
            address = functor(address)
        return address
    return apply


# --- table == formula -------------------------------------------------------------------------------
def _table_equals_formula(mode: str, triples, expected: str, id_suffix: str = "",
                          what: str = "the claimed XOR formula"):
    notation = model.formula_notation(triples)
    spec_formula = _spec_formula(triples)

    def build() -> Query:
        address = var("address")
        return Query({"address": address}, [],
                     model.table_swizzle(mode, address) == model._formula_swizzle(triples, address))

    def replay(cx: dict) -> bool:
        address = cx["address"]
        return spec_tma.swizzle_byte_address(mode, address) != spec_formula(address)

    flip = " (with the 8-byte flip on odd 128-byte lines)" if mode in model.FLIP_8B_MODES else ""
    prop(f"swizzle.tma.table_equals_formula.{mode}{id_suffix}",
         f"TMA swizzle {mode}: the seed's chunk table{flip} equals {what} {notation} on absolute "
         f"byte addresses",
         ADDRESS_DOMAIN, SOURCE, expected, replay=replay, family=FAMILY)(build)


# --- bijective within the repeat block ----------------------------------------------------------------
def _bijective(mode: str):
    size = model.REPEAT_BYTES[mode]

    def build() -> Query:
        a, b = var("a"), var("b")
        fa, fb = model.table_swizzle(mode, a), model.table_swizzle(mode, b)
        claim = z3.And(z3.Implies(a != b, fa != fb),
                       model.repeat_block(mode, fa) == model.repeat_block(mode, a))
        return Query({"a": a, "b": b}, [], claim)

    def replay(cx: dict) -> bool:
        a, b = cx["a"], cx["b"]
        fa, fb = spec_tma.swizzle_byte_address(mode, a), spec_tma.swizzle_byte_address(mode, b)
        collision = a != b and fa == fb
        escape = fa // size != a // size
        return collision or escape

    prop(f"swizzle.tma.bijective.{mode}",
         f"TMA swizzle {mode} (seed table) permutes the bytes of each aligned {size}-byte repeat block: "
         f"distinct addresses land at distinct addresses, each in its own block",
         PAIR_DOMAIN, SOURCE, "proved", replay=replay, family=FAMILY)(build)


for _mode in model.MODES:
    _table_equals_formula(_mode, model.XOR_FORMULAS[_mode], "proved")
    _bijective(_mode)

# The deliberately false claim: forget the 8-byte flip (only the chunk pattern Sw<2,5,2>).
_table_equals_formula("128B_ATOM_32B_FLIP_8B", model.XOR_FORMULAS["128B_ATOM_32B"], "refuted",
                      id_suffix="_without_flip",
                      what="(deliberately false: the flip is left out) the plain chunk formula")
