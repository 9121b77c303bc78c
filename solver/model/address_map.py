"""A CuTe layout's address map as plain integers (no Z3: the GF(2) engine uses it without importing Z3;
solver.model.cute_layout turns it into Z3 terms)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class AddressMap:
    modes: tuple                    # ((extent, stride), ...) per top-level mode
    element_bytes: int = 1
    base: int = 0
    swizzle: Optional[tuple] = None  # (B, M, S)

    @property
    def leaves(self) -> tuple:
        return tuple(leaf for mode in self.modes for leaf in mode)

    def mode_size(self, mode: int) -> int:
        size = 1
        for extent, _ in self.modes[mode]:
            size *= extent
        return size

    @property
    def size(self) -> int:
        size = 1
        for extent, _ in self.leaves:
            size *= extent
        return size
