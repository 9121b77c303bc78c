"""Fast paths of spec/tma/swizzle.py: many addresses at once, by one period's table of differences.

swizzle_byte_address(a) - a depends on a mod pattern_period(mode) only (the table row, the chunk and the
flip all come from the address bits below the period, a power of two), so one period of differences,
computed by the definition itself, places any address with one lookup. The differences are kept per state
of what the definition reads (its table, the constants); a swizzle_byte_address put in the definition's
place (a test's stand-in) has no table: it is called element by element.
"""
from __future__ import annotations

from typing import Optional

from spec import fast
from spec.tma import swizzle as tma_swizzle

_DELTAS: dict = {}


def _is_the_definition(function) -> bool:
    """Whether `function` is swizzle_byte_address as spec/tma/swizzle.py defines it, not another function
    set in its place (whose differences need not repeat with the period)."""
    return (getattr(function, "__module__", None) == tma_swizzle.__name__
            and getattr(function, "__qualname__", None) == "swizzle_byte_address")


def _deltas(mode: str) -> Optional[tuple]:
    """(period - 1, [swizzle_byte_address(r) - r for r in range(period)], whether r -> r + delta[r]
    permutes range(period)) for `mode`; None when the period is not a power of two (no mask can take
    the address apart)."""
    key = (mode, tma_swizzle._TABLES.get(mode), id(tma_swizzle.MODES.get(mode)), tma_swizzle.ROW_BYTES,
           tma_swizzle.CHUNK_BYTES, tma_swizzle.FLIP_BYTES)
    found = _DELTAS.get(key)
    if found is None:
        period = tma_swizzle.pattern_period(mode)
        if period <= 0 or period & (period - 1):
            return None
        if len(_DELTAS) > 64:
            _DELTAS.clear()
        delta = [tma_swizzle.swizzle_byte_address(mode, r) - r for r in range(period)]
        found = _DELTAS[key] = (period - 1, delta, sorted(r + d for r, d in enumerate(delta)) == list(range(period)))
    return found


@fast.fast_version_of(tma_swizzle.no_period_deltas)
def period_deltas(mode: str) -> Optional[tuple]:
    """The table of spec.tma.swizzle.period_deltas: one period of swizzle_byte_address's differences, None
    when the period is not a power of two or swizzle_byte_address is not the definition."""
    tma_swizzle.mode_info(mode)
    return _deltas(mode) if _is_the_definition(tma_swizzle.swizzle_byte_address) else None


@fast.fast_version_of(tma_swizzle.swizzle_byte_addresses_by_element)
def swizzle_byte_addresses(mode: str, addresses) -> list:
    """[swizzle_byte_address(mode, a) for a in addresses], with one table lookup per address. The
    addresses are ints; a list with a negative one (malformed input) goes to the definition, which says so."""
    tma_swizzle.mode_info(mode)
    addresses = addresses if isinstance(addresses, (list, tuple, range)) else list(addresses)
    found = period_deltas(mode)
    if found is None:
        return tma_swizzle.swizzle_byte_addresses_by_element(mode, addresses)
    if addresses and (min(addresses[0], addresses[-1]) if isinstance(addresses, range) else min(addresses)) < 0:
        return tma_swizzle.swizzle_byte_addresses_by_element(mode, addresses)
    mask, delta, _ = found
    return [a + delta[a & mask] for a in addresses]
