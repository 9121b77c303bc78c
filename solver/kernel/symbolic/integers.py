"""A bit-vector term written over the integers ("int-blasting"), for the questions bit-blasting cannot answer.

Compilers divide by a constant with a multiply-high: quack's `k % 6` is `k - 6 * (mulhi(k, 715827883) +
sign)`. Proving that this takes only the values -5..5 bit-blasts a 64-bit multiplier, and Z3 gives up
(tests/solver_tests/kernel/test_kernel_bitvector.py keeps the case). Over the integers the same question is linear (a product
by a constant, a division by a power of two) and Z3's arithmetic answers it at once.

Each w-bit term becomes an integer in [0, 2^w) that is equal to its unsigned value for every assignment:
    bvadd, bvsub, bvneg, a product by a constant  ->  the integer result mod 2^w
    extract(hi, lo), concat, zero_ext, sign_ext   ->  div / mod / multiply by powers of two
    bvlshr, bvshl, bvashr by a constant            ->  div or product by 2^k (signed: floor division)
    bvand with 2^k - 1 or its complement           ->  mod 2^k, or minus it
    bvudiv, bvurem, bvsdiv, bvsrem by a constant c > 0  ->  div / mod (signed: truncated towards zero)
    ite, comparisons (signed: on the signed values), not, and, or
Anything else (a product of two variables, an `or` of two variables, a shift by a variable) raises
NotLinear: the caller then has no answer from here (never a wrong one). Each free w-bit variable becomes an
integer variable constrained to [0, 2^w). The translation is checked against Z3's own evaluation of the
bit-vector term on random assignments (tests/solver_tests/kernel/test_kernel_bitvector.py).
"""
from __future__ import annotations

import z3


class NotLinear(Exception):
    """The term uses an operation this translation does not write over the integers."""


def _power(k: int) -> int:
    return 1 << k


class Translation:
    """Bit-vector terms -> integer terms, sharing the translation of shared sub-terms."""

    def __init__(self):
        self.memo: dict = {}
        self.ranges: list = []            # 0 <= v < 2^w for each variable met
        self.variables: dict = {}

    def integer(self, term) -> z3.ArithRef:
        key = term.get_id()
        found = self.memo.get(key)
        if found is None:
            found = self.memo[key] = self._translate(term)
        return found

    def boolean(self, term) -> z3.BoolRef:
        key = term.get_id()
        found = self.memo.get(key)
        if found is None:
            found = self.memo[key] = self._condition(term)
        return found

    def _variable(self, term):
        name = term.decl().name()
        found = self.variables.get(name)
        if found is None:
            found = self.variables[name] = z3.Int(f"int:{name}")
            self.ranges.append(z3.And(found >= 0, found < _power(term.size())))
        return found

    def _signed(self, value, width: int):
        return z3.If(value >= _power(width - 1), value - _power(width), value)

    def _translate(self, term):
        if z3.is_bv_value(term):
            return z3.IntVal(term.as_long())
        kind = term.decl().kind()
        width = term.size()
        modulus = _power(width)
        children = term.children()
        if kind == z3.Z3_OP_UNINTERPRETED and not children:
            return self._variable(term)
        if kind == z3.Z3_OP_BADD:
            return z3.Sum([self.integer(c) for c in children]) % modulus
        if kind == z3.Z3_OP_BSUB:
            return (self.integer(children[0]) - self.integer(children[1])) % modulus
        if kind == z3.Z3_OP_BNEG:
            return (-self.integer(children[0])) % modulus
        if kind == z3.Z3_OP_BNOT:
            return modulus - 1 - self.integer(children[0])
        if kind == z3.Z3_OP_BMUL:
            constants = [c.as_long() for c in children if z3.is_bv_value(c)]
            others = [c for c in children if not z3.is_bv_value(c)]
            if len(others) > 1:
                raise NotLinear("a product of two values not known")
            product = 1
            for c in constants:
                product *= c
            return (self.integer(others[0]) * (product % modulus)) % modulus if others else \
                z3.IntVal(product % modulus)
        if kind == z3.Z3_OP_EXTRACT:
            high, low = term.params()
            return (self.integer(children[0]) / _power(low)) % _power(high - low + 1)
        if kind == z3.Z3_OP_CONCAT:
            value = z3.IntVal(0)
            for child in children:
                value = value * _power(child.size()) + self.integer(child)
            return value
        if kind == z3.Z3_OP_ZERO_EXT:
            return self.integer(children[0])
        if kind == z3.Z3_OP_SIGN_EXT:
            inner = children[0].size()
            value = self.integer(children[0])
            return z3.If(value >= _power(inner - 1), value + (modulus - _power(inner)), value)
        if kind in (z3.Z3_OP_BLSHR, z3.Z3_OP_BSHL, z3.Z3_OP_BASHR):
            if not z3.is_bv_value(children[1]):
                raise NotLinear("a shift by a value not known")
            amount = children[1].as_long()
            value = self.integer(children[0])
            if kind == z3.Z3_OP_BSHL:
                return z3.IntVal(0) if amount >= width else (value * _power(amount)) % modulus
            if kind == z3.Z3_OP_BLSHR:
                return z3.IntVal(0) if amount >= width else value / _power(amount)
            return (self._signed(value, width) / _power(min(amount, width))) % modulus   # floor division
        if kind == z3.Z3_OP_BAND:
            return self._and(children, width)
        if kind in (z3.Z3_OP_BUDIV, z3.Z3_OP_BUDIV_I, z3.Z3_OP_BUREM, z3.Z3_OP_BUREM_I,
                    z3.Z3_OP_BSDIV, z3.Z3_OP_BSDIV_I, z3.Z3_OP_BSREM, z3.Z3_OP_BSREM_I):
            return self._division(kind, children, width)
        if kind == z3.Z3_OP_ITE:
            return z3.If(self.boolean(children[0]), self.integer(children[1]), self.integer(children[2]))
        raise NotLinear(f"the operation {term.decl().name()}")

    def _and(self, children, width: int):
        constants = [c.as_long() for c in children if z3.is_bv_value(c)]
        others = [c for c in children if not z3.is_bv_value(c)]
        if len(others) != 1 or len(constants) != 1:
            raise NotLinear("an and of values not known")
        constant, value = constants[0], self.integer(others[0])
        low = constant & -constant if constant else 0
        if constant and constant & (constant + 1) == 0:                  # 2^k - 1: the low k bits
            return value % (constant + 1)
        if constant and (_power(width) - constant) & (_power(width) - constant - 1) == 0 \
                and constant + low == _power(width):                      # ~(2^k - 1): clear the low k bits
            return value - value % low
        if constant == 0:
            return z3.IntVal(0)
        raise NotLinear("an and with a mask that is not a run of low or high bits")

    def _division(self, kind, children, width: int):
        if not z3.is_bv_value(children[1]) or children[1].as_long() == 0:
            raise NotLinear("a division by a value not known (or by 0)")
        modulus = _power(width)
        divisor, value = children[1].as_long(), self.integer(children[0])
        if kind in (z3.Z3_OP_BUDIV, z3.Z3_OP_BUDIV_I):
            return value / divisor
        if kind in (z3.Z3_OP_BUREM, z3.Z3_OP_BUREM_I):
            return value % divisor
        a, d = self._signed(value, width), self._signed(z3.IntVal(divisor), width)
        magnitude = z3.If(a >= 0, a, -a) / z3.If(d >= 0, d, -d)            # |a| div |d|, truncated
        quotient = z3.If((a >= 0) == (d >= 0), magnitude, -magnitude)
        if kind in (z3.Z3_OP_BSDIV, z3.Z3_OP_BSDIV_I):
            return quotient % modulus
        return (a - quotient * d) % modulus

    def _condition(self, term):
        if z3.is_true(term) or z3.is_false(term):
            return z3.BoolVal(z3.is_true(term))
        kind = term.decl().kind()
        children = term.children()
        if kind == z3.Z3_OP_NOT:
            return z3.Not(self.boolean(children[0]))
        if kind == z3.Z3_OP_AND:
            return z3.And([self.boolean(c) for c in children])
        if kind == z3.Z3_OP_OR:
            return z3.Or([self.boolean(c) for c in children])
        if kind == z3.Z3_OP_ITE:
            return z3.If(self.boolean(children[0]), self.boolean(children[1]), self.boolean(children[2]))
        if kind in (z3.Z3_OP_EQ, z3.Z3_OP_DISTINCT) and z3.is_bv(children[0]):
            a, b = self.integer(children[0]), self.integer(children[1])
            return a == b if kind == z3.Z3_OP_EQ else a != b
        if kind == z3.Z3_OP_EQ and z3.is_bool(children[0]):
            return self.boolean(children[0]) == self.boolean(children[1])
        unsigned = {z3.Z3_OP_ULEQ: lambda a, b: a <= b, z3.Z3_OP_ULT: lambda a, b: a < b,
                    z3.Z3_OP_UGEQ: lambda a, b: a >= b, z3.Z3_OP_UGT: lambda a, b: a > b}
        signed = {z3.Z3_OP_SLEQ: lambda a, b: a <= b, z3.Z3_OP_SLT: lambda a, b: a < b,
                  z3.Z3_OP_SGEQ: lambda a, b: a >= b, z3.Z3_OP_SGT: lambda a, b: a > b}
        if kind in unsigned:
            return unsigned[kind](self.integer(children[0]), self.integer(children[1]))
        if kind in signed:
            width = children[0].size()
            return signed[kind](self._signed(self.integer(children[0]), width),
                                self._signed(self.integer(children[1]), width))
        raise NotLinear(f"the condition {term.decl().name()}")
