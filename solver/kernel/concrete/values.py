"""The values of the concrete executor: what one warp's registers hold.

A register holds
* an int, the same in every active lane (most address arithmetic is warp-uniform), or
* Lanes: one int per lane (%laneid, %tid.x and what is computed from them), or
* SharedGeneric: a generic address inside the shared window (PTX ISA 9.7.9.20 cvta; 6.4.1 generic
  addressing): the window's base is the hardware's, so only adding and subtracting offsets and
  `cvta.to.shared` back are known; any other use is Unknown, or
* Unknown, with the reason (a value loaded from memory, a parameter given no value, an opcode not
  modelled). Nothing is guessed: every int is the value the hardware computes, given the parameters.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Union

WARP = 32


@dataclass(frozen=True)
class Unknown:
    reason: str


@dataclass(frozen=True)
class Lanes:
    values: tuple          # WARP ints


@dataclass(frozen=True)
class SharedGeneric:
    offset: int            # the shared address the generic address stands for


Value = Union[int, Lanes, SharedGeneric, Unknown]


def mask(width: int) -> int:
    return (1 << width) - 1


def signed(value: int, width: int) -> int:
    value &= mask(width)
    return value - (1 << width) if value >> (width - 1) else value


def first_unknown(values) -> Unknown:
    """The first Unknown among the values, as a plain Unknown: what integer semantics make of a value they
    cannot compute is not the value (an accumulator's tags, solver/kernel/concrete/tags.py, stay behind)."""
    found = next((v for v in values if isinstance(v, Unknown)), None)
    return found if found is None or type(found) is Unknown else Unknown(found.reason)


def lane_of(value: Value, lane: int):
    return value.values[lane] if isinstance(value, Lanes) else value


def uniform(value: Value) -> Value:
    """Lanes that all agree are one int."""
    if isinstance(value, Lanes) and value.values.count(value.values[0]) == WARP:
        return value.values[0]
    return value


def lift(function: Callable, *values: Value) -> Value:
    """function applied lane by lane to ints; Unknown if any operand is, SharedGeneric not allowed here."""
    unknown = first_unknown(values)
    if unknown is not None:
        return unknown
    if any(isinstance(v, SharedGeneric) for v in values):
        return Unknown("the bits of a generic shared address (the shared window's base is the hardware's)")
    try:
        if not any(isinstance(v, Lanes) for v in values):
            return function(*values)
        columns = [v.values if isinstance(v, Lanes) else (v,) * WARP for v in values]
        return uniform(Lanes(tuple(map(function, *columns))))
    except ZeroDivisionError:
        return Unknown("a division by zero (PTX leaves the result unspecified)")


def select(predicate: Value, then: Value, otherwise: Value) -> Value:
    """Lane by lane: then where the predicate holds."""
    if isinstance(predicate, Unknown):
        return predicate
    if not isinstance(predicate, Lanes):
        return then if predicate else otherwise
    if any(isinstance(v, (Unknown, SharedGeneric)) for v in (then, otherwise)):
        chosen = {bool(p) for p in predicate.values}
        if chosen == {True}:
            return then
        if chosen == {False}:
            return otherwise
        return first_unknown((then, otherwise)) or Unknown("a generic address in some lanes only")
    return uniform(Lanes(tuple(lane_of(then, i) if predicate.values[i] else lane_of(otherwise, i)
                               for i in range(WARP))))
