"""The shape of one tcgen05.mma (sm100 / sm103): M x N x K per kind and .cta_group, PTX ISA 9.7.16.2.1
Table 39, and the N steps of a transposed 8-bit B, 9.7.16.10.1 Table 52.

Table 39, dense, no .ws (what a desc case's tcgen05.mma is; PTX 9.1 numbering, 9.7.17.2.1 from PTX 9.3):

  .kind                    .cta_group::1                       .cta_group::2
  f16, tf32, f8f6f4        M 64, 128; N 8..256 step 8          M 128, 256; N 16..256 step 16
  i8                       M 64, 128; N 8, 16, 24, 32, then    M 128, 256; N 32..256 step 32
                           48..256 step 16
  mxf8f6f4                 M 128; N 8..256 step 8              M 128, 256; N 16..256 step 16
  mxf4, mxf4nvf4           M 128; N 8..256 step 8; K 64        128xNxK, 256xNxK and 256xNxK1:
                                                               N 16..256 step 16; K = 64, K1 = 96

K = 96 (the 48-byte K of dense E2M1, instruction descriptor bit 31) appears only in the last cell, with
M = 256; its Target ISA Note (9.7.16.2.1.1) restricts it to sm_103a (rule idesc.k96.arch). Table 52: a
transposed (MN-major) 8-bit B takes 16 <= N <= 256 in steps of 16 with .cta_group::1, 32 <= N <= 256 in
steps of 32 with .cta_group::2.

M, N and K travel in the run-time instruction descriptor (9.7.16.4.2), which ptxas does not inspect:
ptxas 13.0 assembles tcgen05.mma with any M, N and K bit, even from an immediate instruction descriptor
(tests/hardware/desc_ptxas_agreement.json records the desc cases that break these rules assembling). So
nobody refuses a shape outside the table; the manual does not say what such an instruction does.

The subject "mma_shape" is an MmaShape: from a desc case (spec.cases.desc_case.shape) or from an
instruction descriptor and the instruction's .cta_group (`of_instr_desc`). On sm90 (wgmma) no rule here
applies: wgmma's shape is part of its opcode (rules operand.sm90.n_extent, operand.instruction_k).
"""
from __future__ import annotations

from dataclasses import dataclass

from spec.mma import dtypes
from spec.mma.dtypes import DType
from spec.rule import SpecError, rule

SUBJECT = "mma_shape"
CTA_GROUPS = (1, 2)
BLOCK_SCALED_KINDS = ("mxf8f6f4", "mxf4", "mxf4nvf4")
K96 = 96
TABLE39 = "PTX ISA 9.7.16.2.1 Table 39 (.kind and shapes; dense, no .ws)"
NOBODY_SEES_IT = ("M, N and the K bit are fields of the run-time instruction descriptor: ptxas 13.0 "
                  "assembles any of them, an immediate instruction descriptor too "
                  "(tests/hardware/desc_ptxas_agreement.json). The manual does not say what an "
                  "unlisted shape does.")


@dataclass(frozen=True)
class MmaShape:
    """One tcgen05.mma: kind, .cta_group, M, N (the whole instruction's), K (elements) and its B."""
    arch: str
    kind: str
    cta_group: int
    m: int
    n: int
    k: int
    b_dtype: DType
    b_major: str

    @property
    def k96(self) -> bool:
        """Dense K = 96 of kind::mxf4 / mxf4nvf4 (instruction descriptor bit 31)."""
        return self.kind in dtypes.DENSE_SUBBYTE_KINDS and self.k == K96


def make_shape(arch: str, kind: str, cta_group: int, m: int, n: int, k: int, b_dtype: str,
               b_major: str) -> MmaShape:
    """Validate what is malformed (SpecError) and build the shape; a shape outside the tables is a rule
    violation, not malformed. M = 0 or N = 0 is a shape an instruction descriptor can encode (its fields
    hold M >> 4 and N >> 3, PTX 9.7.16.4.2 Table 44), so it is a violation of mma.shape.m / mma.shape.n
    (Table 39 lists no such shape), not malformed input; a negative or non-integer one is malformed."""
    if cta_group not in CTA_GROUPS:
        raise SpecError("cta_group", cta_group, "expected 1 or 2 (.cta_group::1 or ::2)", M_RULE.id)
    for name, value, smallest, rule_id in (("m", m, 0, M_RULE.id), ("n", n, 0, N_RULE.id), ("k", k, 1, K96_M.id)):
        if isinstance(value, bool) or not isinstance(value, int) or value < smallest:
            raise SpecError(name, value, "a whole number" if smallest == 0 else "a positive number", rule_id)
    d = dtypes.dtype(b_dtype)
    return MmaShape(arch, dtypes.check_kind(d, kind), cta_group, m, n, k, d, b_major)


def of_instr_desc(idesc, cta_group: int, b_dtype: str) -> MmaShape:
    """The shape a tcgen05.mma with this instruction descriptor (spec.mma.instr_desc) and .cta_group
    has: M and N from its fields, K from the kind (bit 31 for the mxf4 kinds: 96 instead of 64), B's
    major-ness from the transpose bit; `b_dtype` names B's type (the descriptor holds its code)."""
    d = dtypes.dtype(b_dtype)
    k = 2 * dtypes.elements_per_chunk(d, idesc.kind)
    if idesc.kind in dtypes.DENSE_SUBBYTE_KINDS and idesc.field("k96"):
        k = K96
    return make_shape(idesc.arch, idesc.kind, cta_group, idesc.m, idesc.n, k, b_dtype, idesc.b_major)


def m_values(kind: str, cta_group: int) -> tuple:
    """Table 39: the M of the kind's dense row for the .cta_group."""
    if cta_group == 2:
        return (128, 256)
    return (128,) if kind in BLOCK_SCALED_KINDS else (64, 128)


def n_values(kind: str, cta_group: int) -> tuple:
    """Table 39: the N of the kind's dense row for the .cta_group."""
    if kind == "i8":
        return (8, 16, 24, 32) + tuple(range(48, 257, 16)) if cta_group == 1 else tuple(range(32, 257, 32))
    step = 8 if cta_group == 1 else 16
    return tuple(range(step, 257, step))


def transposed_8bit_n_values(cta_group: int) -> tuple:
    """Table 52: the N a transposed 8-bit B takes with the .cta_group."""
    step = 16 * cta_group
    return tuple(range(step, 257, step))


def _applies(s: MmaShape) -> bool:
    return s.arch != "sm90"


M_RULE = rule(
    "mma.shape.m", TABLE39,
    "tcgen05.mma's M is one Table 39 lists for the kind and .cta_group: .cta_group::1 64 or 128 "
    "(kind::f16, tf32, f8f6f4, i8), 128 only (kind::mxf8f6f4, mxf4, mxf4nvf4); .cta_group::2 128 or 256.",
    subject=SUBJECT, note=NOBODY_SEES_IT)


@M_RULE.checker
def _m(s: MmaShape):
    if not _applies(s) or s.m in m_values(s.kind, s.cta_group):
        return None
    return (f"M = {s.m} is not a kind::{s.kind} .cta_group::{s.cta_group} shape (M = "
            + " or ".join(map(str, m_values(s.kind, s.cta_group))) + ")")


N_RULE = rule(
    "mma.shape.n", TABLE39,
    "tcgen05.mma's N is one Table 39 lists for the kind and .cta_group: .cta_group::1 8 to 256 in steps of "
    "8 (kind::i8: 8, 16, 24, 32, then 48 to 256 in steps of 16); .cta_group::2 16 to 256 in steps of 16 "
    "(kind::i8: 32 to 256 in steps of 32). K = 96 is a .cta_group::2 shape: its N steps by 16.",
    subject=SUBJECT, note=NOBODY_SEES_IT)


@N_RULE.checker
def _n(s: MmaShape):
    if not _applies(s) or s.n in n_values(s.kind, s.cta_group):
        return None
    allowed = n_values(s.kind, s.cta_group)
    return f"N = {s.n} is not a kind::{s.kind} .cta_group::{s.cta_group} shape ({allowed[0]} to {allowed[-1]})"


K96_CTA_GROUP = rule(
    "mma.shape.k96.cta_group", TABLE39 + "; 9.7.16.2.1.1 (K = 96 on sm_103a)",
    "Dense K = 96 (kind::mxf4 / mxf4nvf4, instruction descriptor bit 31) exists only with .cta_group::2: "
    "Table 39 lists it (as K1 = 96, shape 256xNxK1) in the .cta_group::2 row alone; the .cta_group::1 "
    "row has K = 64 only.", subject=SUBJECT, note=NOBODY_SEES_IT)


@K96_CTA_GROUP.checker
def _k96_cta_group(s: MmaShape):
    if _applies(s) and s.k96 and s.cta_group != 2:
        return f"K = 96 with .cta_group::{s.cta_group}; Table 39 lists K = 96 with .cta_group::2 only"
    return None


K96_M = rule(
    "mma.shape.k96.m", TABLE39,
    "With .cta_group::2, K = 96 exists only with M = 256 (Table 39's 256xNxK1, K1 = 96; the 128xNxK shape "
    "of the same row has K = 64).", subject=SUBJECT, note=NOBODY_SEES_IT)


@K96_M.checker
def _k96_m(s: MmaShape):
    if _applies(s) and s.k96 and s.cta_group == 2 and s.m != 256:
        return f"K = 96 with M = {s.m}; Table 39 lists K = 96 as 256xNxK1 only"
    return None


TRANSPOSED_8BIT_N = rule(
    "mma.shape.mn_major_8bit.n", "PTX ISA 9.7.16.10.1 Table 52 (N shape with .cta_group for 8bit transpose B)",
    "A transposed (MN-major) 8-bit B (e4m3, e5m2, s8, u8) takes 16 <= N <= 256 in steps of 16 with "
    ".cta_group::1 and 32 <= N <= 256 in steps of 32 with .cta_group::2.",
    subject=SUBJECT, note=NOBODY_SEES_IT)


@TRANSPOSED_8BIT_N.checker
def _transposed_8bit_n(s: MmaShape):
    if not _applies(s) or s.b_major != "MN" or s.b_dtype.bits != 8:
        return None
    allowed = transposed_8bit_n_values(s.cta_group)
    if s.n in allowed:
        return None
    return (f"N = {s.n} with a transposed 8-bit B ({s.b_dtype.name}) and .cta_group::{s.cta_group}: "
            f"Table 52 allows {allowed[0]} to 256 in steps of {allowed[0]}")
