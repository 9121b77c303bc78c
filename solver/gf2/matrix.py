"""Bit matrices over GF(2) with Python ints as vectors: a linear map F2^n -> F2^m is the list of its n
columns (column j = the image of unit vector j, an m-bit int). Everything here is Gaussian elimination
that keeps, for every reduced vector, which original columns it is the XOR of (a bit mask), so that a
dependency is a kernel vector and an extreme value comes with the input that reaches it."""
from __future__ import annotations

from typing import List, Optional, Tuple


class Basis:
    """An echelon basis of the span of some columns: vectors with distinct leading bits, each tagged with
    the set (bit mask over column indices) of original columns whose XOR it is."""

    def __init__(self, columns: List[int]):
        self.vectors: dict = {}          # leading bit -> (vector, combination)
        self.kernel: List[int] = []      # combinations (non-zero) whose columns XOR to 0
        for j, column in enumerate(columns):
            self._insert(column, 1 << j)

    def _insert(self, vector: int, combination: int) -> None:
        while vector:
            lead = vector.bit_length() - 1
            if lead not in self.vectors:
                self.vectors[lead] = (vector, combination)
                return
            other, other_combination = self.vectors[lead]
            vector ^= other
            combination ^= other_combination
        self.kernel.append(combination)

    @property
    def rank(self) -> int:
        return len(self.vectors)

    def contains(self, vector: int) -> Optional[int]:
        """The combination of columns whose XOR is `vector`, or None when it is not in the span."""
        x, combination = vector, 0
        for lead in sorted(self.vectors, reverse=True):
            if x >> lead & 1:
                other, other_combination = self.vectors[lead]
                x ^= other
                combination ^= other_combination
        return combination if x == 0 else None

    def extreme(self, offset: int, largest: bool) -> Tuple[int, int]:
        """The largest (or smallest) integer in offset XOR span, and the combination that reaches it:
        greedy over the leading bits from the top (each decides its own bit, lower ones cannot undo it)."""
        x, combination = offset, 0
        for lead in sorted(self.vectors, reverse=True):
            other, other_combination = self.vectors[lead]
            if bool(x >> lead & 1) != largest:
                x ^= other
                combination ^= other_combination
        return x, combination


def rank(columns: List[int]) -> int:
    return Basis(columns).rank


def kernel_vector(columns: List[int]) -> Optional[int]:
    """A non-zero input (bit mask) that the map sends to 0, or None when the columns are independent."""
    found = Basis(columns).kernel
    return found[0] if found else None


def apply(columns: List[int], offset: int, x: int) -> int:
    """offset XOR (XOR of the columns selected by the bits of x)."""
    value = offset
    j = 0
    while x:
        if x & 1:
            value ^= columns[j]
        x >>= 1
        j += 1
    return value


def matrix_rows(columns: List[int], height: int) -> List[int]:
    """The same map as rows: row i (an int over the n inputs) has bit j when column j has bit i."""
    return [sum(1 << j for j, c in enumerate(columns) if c >> i & 1) for i in range(height)]
