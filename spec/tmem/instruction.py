"""One tcgen05 instruction as PTX text: parse it and check it for a target (PTX 9.7.16.7.1, 9.7.16.8.3,
9.7.16.8.4, 9.7.16.9).

Modelled: tcgen05.ld, tcgen05.ld.red, tcgen05.st, tcgen05.alloc, tcgen05.dealloc,
tcgen05.relinquish_alloc_permit, tcgen05.wait::ld, tcgen05.wait::st, tcgen05.cp (spec/tmem/cp.py) and
tcgen05.shift (spec/tmem/shift.py). Operands: %r<n> (a .b32 register),
%rd<n> (a .b64 register), a bare name (a .shared variable), integer constants as PTX spells them (PTX
4.5.1: decimal, 0x hex, 0 octal, 0b binary, an optional U); addresses in brackets, [reg], [reg+imm],
[imm] or [name]. A text outside this convention (another register, a floating-point constant, an
expression) is malformed input (SpecError); a text that names a tcgen05 instruction but is written
against PTX's syntax (a misspelt name such as tcgen05.wait::mma, operands missing, extra or out of
order, [reg-imm]) is an instruction ptxas refuses: rule tmem.instruction.syntax.

`check` sorts the broken rules in two: `violations`, those ptxas enforces (it refuses the text), and
`undefined`, those it lets through (wrong at run time: lanes outside the warp's quarter, cells outside
tensor memory, allocation sizes). The address of an ld/st is a register (ptxas refuses an immediate
one), so the run-time rules of an access are checked only where the caller gives the value of taddr
(`address=`) and, for the lane quarter, the issuing warp (`warp=`); so are those of tcgen05.cp and
tcgen05.shift (ptxas 13.0 crashes on their immediate address; the value of one is read from the text).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Optional

from spec.ptx_operands import split_operands
from spec.rule import SpecError, check_all, one_line, rule
from spec.tmem import address as tmem_address
from spec.tmem import alloc as tmem_alloc
from spec.tmem import cp as tmem_cp
from spec.tmem import ld_st
from spec.tmem import shift as tmem_shift
from spec.tmem.targets import (LD_RED_PTX, TARGET_PTX, TARGETS, TCGEN05_PTX, TCGEN05_TARGETS,
                               parse_version)

# The column rules of alloc/dealloc (spec/tmem/alloc.py) are about this module's subject too.
ALLOC_RULES = (tmem_alloc.ALLOC_COLUMNS, tmem_alloc.DEALLOC_GRANULE, tmem_alloc.DEALLOC_COLUMNS)
KINDS = ("ld", "ld.red", "st", "alloc", "dealloc", "relinquish_alloc_permit", "wait::ld", "wait::st", "cp",
         "shift")
NOT_MODELLED = ("mma", "commit", "fence")
# The rules of tcgen05.cp and tcgen05.shift (spec/tmem/cp.py, spec/tmem/shift.py) are about this subject too.
COPY_RULES = (tmem_cp.SHAPE, tmem_cp.MULTICAST, tmem_cp.FORMAT, tmem_cp.LANE_ALIGNMENT, tmem_shift.TARGET,
              tmem_shift.LANE_ALIGNMENT)

SYNTAX = rule(
    "tmem.instruction.syntax", "PTX 9.7.16.7.1; PTX 9.7.16.8.3; PTX 9.7.16.8.4; PTX 9.7.16.9; PTX 4.5.1",
    "An instruction named tcgen05.<name> is one of the family, written as the manual's syntax has it: "
    "tcgen05.ld: tcgen05.ld.sync.aligned.shape.num{.pack::16b}.b32 r, [taddr]{, immHalfSplitoff}; "
    "tcgen05.ld.red: ...shape.num.redOp{.abs}{.NaN}.type r, redval, [taddr]{, imm}; tcgen05.st: "
    "...shape.num{.unpack::16b}.b32 [taddr]{, imm}, r; tcgen05.alloc.cta_group.sync.aligned"
    "{.shared::cta}.b32 [dst], nCols; tcgen05.dealloc.cta_group.sync.aligned.b32 taddr, nCols; "
    "tcgen05.relinquish_alloc_permit.cta_group.sync.aligned; tcgen05.wait::{ld,st}.sync.aligned; "
    "tcgen05.cp.cta_group.shape{.multicast}{.dst_fmt.src_fmt} [taddr], s-desc; "
    "tcgen05.shift.cta_group.down [taddr]: the operands in that order and number, an address [base] or "
    "[base+imm], integer constants decimal, 0x hex, 0 octal or 0b binary with an optional U suffix.",
    subject="tmem_instruction", enforced_by="ptxas",
    note="ptxas 13.0 refuses the rest before any other check: \"Parsing error near ':': syntax error\" "
         "(tcgen05.wait::mma), \"Parsing error near '-'\" ([%r0-4]; [%r0+-4] assembles), \"Arguments "
         "mismatch for instruction 'tcgen05.ld'\" (operands missing, extra or out of order), \"Vector "
         "expected for argument 0\" (an unbraced x1 vector), \".wait::<ld/st> modifier required\" "
         "(tests/hardware/tmem_ptxas_forms.json.gz, tests/hardware/tmem_ptxas_heldout.json.gz).")


class PtxSyntaxError(SpecError):
    """The text names a tcgen05 instruction but is not written as the manual's syntax has it: ptxas
    refuses it (rule tmem.instruction.syntax). `check` turns it into that rule's violation; `parse`
    callers that want only well-formed instructions may treat it as any SpecError."""


@SYNTAX.checker
def _syntax(instr):
    return instr.syntax


_REGISTER = re.compile(r"^%(r|rd)(\d+)$")
_NAME = re.compile(r"^[A-Za-z_$][\w$]*$")
_SHAPE = re.compile(r"^\d+x\d+b(x2)?$")
_NUM = re.compile(r"^x([1-9]\d*)$")             # ptxas 13.0: ".x02" is an unknown modifier
_CTA_GROUP = re.compile(r"^cta_group::([1-9]\d*)$")   # and so is ".cta_group::01"


@dataclass(frozen=True)
class Operand:
    """kind: "b32" / "b64" (a register), "imm", "shared" (a bare name), "address" ([...]: base is an
    Operand, offset an int), "vector" (items: a tuple of Operands)."""
    kind: str
    text: str
    value: object = None          # int for "imm"; the base Operand for "address"
    offset: int = 0
    items: tuple = ()


@dataclass(frozen=True)
class TmemInstruction:
    kind: str                               # one of KINDS
    text: str
    qualifiers: tuple = ()                  # as written, without the leading "tcgen05.<kind>"
    sync: bool = False
    aligned: bool = False
    shape: Optional[str] = None
    num: Optional[int] = None
    pack: Optional[str] = None              # "pack::16b" / "unpack::16b"
    type: Optional[str] = None              # ".b32" etc. without the dot
    red_op: Optional[str] = None
    abs: bool = False
    nan: bool = False
    cta_group: Optional[int] = None
    shared_cta: bool = False
    unknown: tuple = ()                     # qualifiers this model does not know
    multicast: Optional[str] = None         # cp: "warpx2::02_13" / "warpx2::01_23" / "warpx4"
    format: Optional[str] = None            # cp: "b8x16.b6x16_p32" / "b8x16.b4x16_p64"
    format_parts: tuple = ()                # format qualifiers in the order written, unless (cp) they
                                            # make one of the pairs
    down: bool = False                      # shift
    repeated: tuple = ()                    # a qualifier of a kind already given (REPEATABLE aside)
    sdesc: Optional[Operand] = None         # cp: the shared-memory descriptor
    vector: Optional[Operand] = None        # ld/st registers
    redval: Optional[Operand] = None
    taddr: Optional[Operand] = None         # ld/st: an "address" operand; dealloc: a register/immediate
    half_splitoff: Optional[Operand] = None
    dst: Optional[Operand] = None           # alloc
    ncols: object = None                    # alloc/dealloc: int (immediate) or the register's text
    target: Optional[str] = None            # set by check()
    ptx_version: Optional[tuple] = None     # set by check()
    address_value: Optional[int] = None     # cp/shift: taddr's value where known (set by check())
    syntax: Optional[str] = None            # why ptxas cannot parse the text (set by check(); rule SYNTAX)


# PTX 4.5.1 Integer Constants: hexadecimal 0[xX]hex+, binary 0[bB][01]+, octal 0[0-7]+, decimal
# [1-9][0-9]* (and 0), each with an optional U; a leading minus is the negation of one.
_INTEGER = re.compile(r"^(-?)(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)U?$")
# A word that starts with a digit but is no constant ptxas reads: "08", "32u" (ptxas 13.0: "Parsing error
# near '8'"); floating-point constants (PTX 4.5.2: 0f/0F + 8 hex digits, 0d/0D + 16, or with a point or an
# exponent) are outside this model's operands, not errors.
_NOT_A_CONSTANT = re.compile(r"^-?[0-9][0-9A-Za-z_]*$")
_FLOAT = re.compile(r"^-?(0[fFdD][0-9a-fA-F]*|[0-9]+[eE][0-9]*)$")
CONSTANT_CHARACTERS = 70          # -0b, 64 binary digits and U; longer text is no 64-bit constant (nor read)


def _number(text: str) -> Optional[int]:
    """A PTX integer constant (PTX 4.5.1), or None when the text is not one."""
    match = _INTEGER.match(text) if len(text) <= CONSTANT_CHARACTERS else None
    if not match:
        return None
    digits = match.group(2)
    if digits[:2] in ("0x", "0X"):
        value = int(digits[2:], 16)
    elif digits[:2] in ("0b", "0B"):
        value = int(digits[2:], 2)
    elif digits.startswith("0"):
        value = int(digits, 8)
    else:
        value = int(digits)
    return -value if match.group(1) else value


# ptxas 13.0 on constants wider than 64 bits is irregular: it assembles 2^64 and 2^65 (decimal and hex) and
# 2^65 - 1 in octal, but refuses 2^65 - 1 in binary and 10^20 ("Constant overflow"). Every constant of
# magnitude below 2^64 assembles in every base; wider ones are not modelled (exit 2), never guessed.
CONSTANT_LIMIT = 1 << 64


def _constant(text: str) -> Optional[int]:
    """_number(text), refused (SpecError: not modelled) when its magnitude does not fit 64 bits."""
    value = _number(text)
    if value is not None and abs(value) >= CONSTANT_LIMIT:
        raise SpecError("operand", text, "a constant wider than 64 bits: ptxas 13.0 refuses some such "
                        "('Constant overflow') and assembles others; not modelled", SYNTAX.id)
    return value


def _syntax_error(field_name: str, text: str, problem: str) -> PtxSyntaxError:
    return PtxSyntaxError(field_name, text, problem, SYNTAX.id)


def parse_operand(text: str) -> Operand:
    """One operand. PtxSyntaxError for one written against PTX's grammar (an empty operand, an address that
    is not [base] or [base+imm]); SpecError for a token outside this model's operand convention (a
    register other than %r<n> / %rd<n>, a floating-point constant, an expression)."""
    text = text.strip()
    if not text:
        raise _syntax_error("operand", text, "an empty operand (a stray comma)")
    if text.startswith("{") and text.endswith("}"):
        inner = text[1:-1].strip()
        items = tuple(parse_operand(t) for t in inner.split(",")) if inner else ()
        return Operand("vector", text, items=items)
    if text.startswith("[") and text.endswith("]"):
        return _address(text)
    register = _REGISTER.match(text)
    if register:
        return Operand("b32" if register.group(1) == "r" else "b64", text)
    value = _constant(text)
    if value is not None:
        return Operand("imm", text, value=value)
    if _NAME.match(text):
        return Operand("shared", text)
    if _NOT_A_CONSTANT.match(text) and not _FLOAT.match(text) and len(text) <= CONSTANT_CHARACTERS:
        raise _syntax_error("operand", text, "not a PTX constant (PTX 4.5.1: 08 and 32u are none)")
    raise SpecError("operand", text, "expected %r<n>, %rd<n>, a name, an integer constant, {...} or [...]",
                    SYNTAX.id)


def _address(text: str) -> Operand:
    """[base] or [base+imm] (PTX 6.4.1 Addresses as Operands; ptxas 13.0 refuses [base-imm] and
    [base+register] as syntax errors and takes [base+-imm])."""
    inner = text[1:-1].replace(" ", "")
    base, plus, offset_text = inner.partition("+")
    if not plus:
        if "-" in inner.lstrip("-"):
            raise _syntax_error("operand", text, "an address is [base] or [base+imm]")
        return Operand("address", text, value=parse_operand(inner), offset=0)
    offset = _constant(offset_text)
    if offset is None:
        raise _syntax_error("operand", text, "an address offset is an integer constant")
    return Operand("address", text, value=parse_operand(base), offset=offset)


TYPES = ("b32", "f32", "u32", "s32", "b64", "f16", "s16", "u16")
# ptxas 13.0 lets these be written twice (.sync.sync, .NaN.NaN assemble); every other kind is refused
# twice: "Multiple .num modifiers specified", "Multiple matrix shape modifiers", "Unexpected instruction
# types", "Multiple instruction post-operation flags", "Unexpected number of state spaces".
REPEATABLE = ("sync", "NaN")
# ptxas 13.0 assembles one or two decompression qualifiers on the instructions other than cp (rule
# tmem.cp.format_only) and refuses a third: "Unexpected number of 'format conversion' modifiers specified".
MAX_FOREIGN_FORMATS = 2


def _qualifier_group(kind: str, q: str) -> str:
    """The kind of qualifier `q` is: a second of the same kind repeats or contradicts the first."""
    if _SHAPE.match(q):
        return "shape"
    if _NUM.match(q):
        return "num"
    if q in ("pack::16b", "unpack::16b"):
        return "pack"                    # ptxas 13.0: "Multiple .unpack::16b modifiers" for both
    if q in TYPES:
        return "type"
    if _CTA_GROUP.match(q):
        return "cta_group"
    if q in tmem_cp.MULTICASTS:
        return "multicast"
    if kind == "ld.red" and q.isalpha() and q not in ("sync", "aligned", "abs", "NaN", "down"):
        return "red_op"
    return q


def parse(text: str) -> TmemInstruction:
    """One tcgen05 instruction. SpecError if the text is not a tcgen05 instruction this module models or
    names an operand outside its convention; PtxSyntaxError (a SpecError) if it names a tcgen05
    instruction but is not written as PTX's syntax has it."""
    body = text.strip().rstrip(";").strip()
    mnemonic, _, rest = re.sub(r"\s", " ", body).partition(" ")        # a tab may end the mnemonic too
    if not mnemonic.startswith("tcgen05."):
        raise SpecError("instruction", text, "not a tcgen05 instruction", SYNTAX.id)
    parts = mnemonic.split(".")[1:]
    kind = parts[0]
    if kind == "ld" and len(parts) > 1 and parts[1] == "red":
        kind, parts = "ld.red", parts[1:]
    if kind.split("::")[0] in NOT_MODELLED:
        raise SpecError("instruction", text, "not modelled here", SYNTAX.id)
    if kind not in KINDS:
        why = ("tcgen05.wait is written tcgen05.wait::ld or tcgen05.wait::st" if kind.startswith("wait") else
               f"no tcgen05 instruction is named tcgen05.{one_line(kind, 60)}")
        raise _syntax_error("instruction", text, why)
    fields = {"sync": False, "aligned": False, "shape": None, "num": None, "pack": None, "type": None,
              "red_op": None, "abs": False, "nan": False, "cta_group": None, "shared_cta": False,
              "multicast": None, "format": None, "down": False}
    unknown, format_parts, seen, repeated = [], [], set(), []
    qualifiers = list(parts[1:])
    while qualifiers:
        q = qualifiers.pop(0)
        if q in tmem_cp.FORMAT_QUALIFIERS:
            format_parts.append(q)           # read as a sequence below, wherever each is written
            continue
        num = _NUM.match(q)
        group = _qualifier_group(kind, q)
        if group in seen and group not in REPEATABLE:
            repeated.append(q)
        seen.add(group)
        if kind == "cp" and q in tmem_cp.MULTICASTS:
            fields["multicast"] = q
        elif kind == "shift" and q == "down":
            fields["down"] = True
        elif q in ("sync", "aligned"):
            fields[q] = True
        elif _SHAPE.match(q):
            fields["shape"] = q
        elif num:
            fields["num"] = int(num.group(1))
        elif q in ("pack::16b", "unpack::16b"):
            fields["pack"] = q
        elif q in TYPES:
            fields["type"] = q
        elif q == "abs":
            fields["abs"] = True
        elif q == "NaN":
            fields["nan"] = True
        elif group == "cta_group":
            fields["cta_group"] = int(_CTA_GROUP.match(q).group(1))
        elif q == "shared::cta":
            fields["shared_cta"] = True
        elif group == "red_op":
            fields["red_op"] = q
        else:
            unknown.append(q)
    if kind == "cp" and ".".join(format_parts) in tmem_cp.FORMATS:
        # ptxas 13.0 reads the format qualifiers in the order written, other qualifiers between them or not
        fields["format"], format_parts = ".".join(format_parts), []
    operands = [parse_operand(t) for t in split_operands(rest)]
    found = dict(kind=kind, text=text, qualifiers=tuple(parts[1:]), unknown=tuple(unknown),
                 format_parts=tuple(format_parts), repeated=tuple(repeated), **fields)
    found.update(_bind_operands(kind, operands, text))
    return TmemInstruction(**found)


def _b32_value(operand: Operand):
    """An immediate as the .b32 operand it fills: ptxas 13.0 keeps its low 32 bits (alloc of
    4294967328 = 2^32 + 32 columns assembles); a register: its text."""
    return operand.value % (1 << 32) if operand.kind == "imm" else operand.text


def _bind_operands(kind: str, operands: list, text: str) -> dict:
    kinds = [o.kind for o in operands]

    def malformed(expected: str):
        return _syntax_error("operands", text, f"tcgen05.{kind} takes {expected}")

    if kind in ("ld", "ld.red"):
        lead = 2 if kind == "ld.red" else 1
        if len(operands) not in (lead + 1, lead + 2) or kinds[0] != "vector" or kinds[lead] != "address":
            raise malformed("r, " + ("redval, " if kind == "ld.red" else "") + "[taddr]{, immHalfSplitoff}")
        return dict(vector=operands[0], redval=operands[1] if kind == "ld.red" else None,
                    taddr=operands[lead], half_splitoff=operands[lead + 1] if len(operands) == lead + 2 else None)
    if kind == "st":
        if len(operands) not in (2, 3) or kinds[0] != "address" or kinds[-1] != "vector":
            raise malformed("[taddr]{, immHalfSplitoff}, r")
        return dict(taddr=operands[0], vector=operands[-1],
                    half_splitoff=operands[1] if len(operands) == 3 else None)
    if kind in ("alloc", "dealloc"):
        if len(operands) != 2 or (kind == "alloc" and kinds[0] != "address"):
            raise malformed("[dst], nCols" if kind == "alloc" else "taddr, nCols")
        ncols = _b32_value(operands[1])
        if kind == "alloc":
            return dict(dst=operands[0], ncols=ncols)
        return dict(taddr=operands[0], ncols=ncols)
    if kind == "cp":
        if len(operands) != 2 or kinds[0] != "address":
            raise malformed("[taddr], s-desc")
        return dict(taddr=operands[0], sdesc=operands[1])
    if kind == "shift":
        if len(operands) != 1 or kinds[0] != "address":
            raise malformed("[taddr]")
        return dict(taddr=operands[0])
    if operands:
        raise malformed("no operands")
    return {}


# --- Constraints on one instruction (subject "tmem_instruction") ----------------------------------------
TARGET = rule(
    "tmem.target", "PTX 9.7.16.7.1; PTX 9.7.16.9 (Target ISA Notes)",
    "tcgen05.alloc, dealloc, relinquish_alloc_permit, wait, cp and shift exist on sm_100a, sm_100f, "
    "sm_103a, sm_103f, sm_110a, sm_110f only (sm_90a and sm_120a lack tcgen05; shift: rule "
    "tmem.shift.target).",
    subject="tmem_instruction", enforced_by="ptxas",
    note="ptxas 13.0: \"Instruction 'tcgen05.wait' not supported on .target 'sm_90a'\". tcgen05.ld/st/"
         "ld.red: rules tmem.ld.target and tmem.ld_red.target.")


@TARGET.checker
def _target(instr: TmemInstruction):
    if instr.target and instr.kind not in ("ld", "st", "ld.red") and instr.target not in TCGEN05_TARGETS:
        return f"tcgen05.{instr.kind} does not exist on {instr.target}"
    return None


PTX_VERSION = rule(
    "tmem.ptx_version", "PTX 9.7.16.7.1; PTX 9.7.16.8.3 (PTX ISA Notes)",
    "tcgen05 instructions need PTX ISA 8.6 or later; tcgen05.ld.red needs 8.8 or later.",
    subject="tmem_instruction", enforced_by="ptxas",
    note="ptxas 13.0: \"Feature 'tcgen05.ld.red' requires PTX ISA .version 8.8 or later\".")


@PTX_VERSION.checker
def _ptx_version(instr: TmemInstruction):
    if instr.ptx_version is None:
        return None
    needed = LD_RED_PTX if instr.kind == "ld.red" else TCGEN05_PTX
    if instr.ptx_version < needed:
        return (f"tcgen05.{instr.kind} needs PTX ISA {needed[0]}.{needed[1]}; the text is "
                f"{instr.ptx_version[0]}.{instr.ptx_version[1]}")
    return None


SYNC_ALIGNED = rule(
    "tmem.instruction.sync_aligned", "PTX 9.7.16.7.1; PTX 9.7.16.8.3; PTX 9.7.16.8.4; PTX 9.7.16.9",
    "The .sync qualifier is mandatory on every modelled tcgen05 instruction but cp and shift, and .aligned "
    "on alloc, dealloc, relinquish_alloc_permit and wait; tcgen05.cp and tcgen05.shift take neither.",
    subject="tmem_instruction", enforced_by="ptxas",
    note="ptxas 13.0: \".sync modifier required for instruction 'tcgen05.ld'\"; it refuses alloc, dealloc "
         "and wait without .aligned but accepts ld, st and ld.red without it (tmem.ld.aligned); \"Illegal "
         "modifier '.sync' for instruction 'tcgen05.cp'\" (and shift).")


@SYNC_ALIGNED.checker
def _sync_aligned(instr: TmemInstruction):
    if instr.kind in ("cp", "shift"):
        written = [q for q, on in ((".sync", instr.sync), (".aligned", instr.aligned)) if on]
        return f"tcgen05.{instr.kind} takes no {' '.join(written)}" if written else None
    if not instr.sync:
        return f"tcgen05.{instr.kind} lacks .sync"
    if not instr.aligned and instr.kind not in ("ld", "st", "ld.red"):
        return f"tcgen05.{instr.kind} lacks .aligned"
    return None


LD_ALIGNED = rule(
    "tmem.ld.aligned", "PTX 9.7.16.8.3; PTX 9.7.16.8.4",
    "The .aligned qualifier is mandatory on tcgen05.ld, tcgen05.ld.red and tcgen05.st: all threads of the "
    "warp execute the same instruction.", subject="tmem_instruction", enforced_by="nobody",
    note="ptxas 13.0 accepts tcgen05.ld/st/ld.red written without .aligned (tests/hardware/"
         "tmem_ptxas_forms.json.gz); the manual's syntax has no form without it.")


@LD_ALIGNED.checker
def _ld_aligned(instr: TmemInstruction):
    if instr.kind in ("ld", "st", "ld.red") and not instr.aligned:
        return f"tcgen05.{instr.kind} lacks .aligned"
    return None


TARGET_PTX_VERSION = rule(
    "tmem.target_ptx_version", "PTX 9.7.16.8.3 (Target ISA Notes); tests/hardware/tmem_ptxas_forms.json.gz",
    "The module's PTX ISA version supports the target: sm_100a from 8.6; sm_100f, sm_103a, sm_103f from "
    "8.8; sm_110a, sm_110f from 9.0 (sm_101 renamed); sm_120a from 8.7; sm_90a from 8.0.",
    subject="tmem_instruction", evidence="ptxas", enforced_by="ptxas",
    note="ptxas 13.0: \"PTX .version 8.7 does not support .target sm_100f\". The manual gives the family "
         "targets from PTX 8.8 and the sm_110 names from 9.0.")


@TARGET_PTX_VERSION.checker
def _target_ptx_version(instr: TmemInstruction):
    if instr.target is None or instr.ptx_version is None:
        return None
    needed = TARGET_PTX[instr.target]
    if instr.ptx_version < needed:
        return (f"PTX ISA {instr.ptx_version[0]}.{instr.ptx_version[1]} does not support {instr.target} "
                f"(needs {needed[0]}.{needed[1]})")
    return None


QUALIFIERS = rule(
    "tmem.instruction.qualifiers", "PTX 9.7.16.7.1; PTX 9.7.16.8.3; PTX 9.7.16.8.4; PTX 9.7.16.9",
    "Each instruction takes only its own qualifiers: a shape and .num for ld/st/ld.red, .cta_group::1 or "
    "::2 (and only it) for alloc/dealloc/relinquish_alloc_permit/cp/shift, .shared::cta for alloc only, "
    ".b32 as the type of ld/st/alloc/dealloc and no type on cp/shift, .down (required) for shift only, "
    "no written shape on shift (.31x256b is implicit); at most two decompression qualifiers (.b8x16, "
    ".b6x16_p32, .b4x16_p64) on an instruction other than cp; each kind of qualifier at most once (a second shape, "
    ".num, packing, type, .cta_group, reduction, .abs, .aligned, ... repeats or contradicts the first; "
    ".pack::16b and .unpack::16b are one kind), but .sync and .NaN may repeat; no unknown qualifier.",
    subject="tmem_instruction", enforced_by="ptxas",
    note="ptxas 13.0: \"Unknown modifier '.x3'\", \".num modifier required\", \"Unexpected instruction "
         "types specified\", \".down modifier required for instruction 'tcgen05.shift'\", \"Multiple "
         ".cta_group::2 modifiers specified\", \"Multiple .num modifiers specified\" (.x2.x2), \"Multiple "
         ".unpack::16b modifiers specified\" (.pack::16b.unpack::16b), \"Multiple matrix shape modifiers\", "
         "\"Multiple .aligned modifiers\", \"Multiple .abs modifiers\", \"Multiple instruction post-operation "
         "flags set\" (.min.max); it assembles .sync.sync and .NaN.NaN; a written .31x256b is a syntax error.")


@QUALIFIERS.checker
def _qualifiers(instr: TmemInstruction):
    if instr.unknown:
        return f"tcgen05.{instr.kind}: unknown qualifier .{instr.unknown[0]}"
    if instr.repeated:
        return f"tcgen05.{instr.kind}: .{instr.repeated[0]} repeats or contradicts a qualifier of its kind"
    if instr.kind != "cp" and len(instr.format_parts) > MAX_FOREIGN_FORMATS:
        return (f"tcgen05.{instr.kind}: {len(instr.format_parts)} format qualifiers "
                f"(.{'.'.join(instr.format_parts)}); ptxas takes at most {MAX_FOREIGN_FORMATS}")
    data = instr.kind in ("ld", "ld.red", "st")
    managing = instr.kind in ("alloc", "dealloc", "relinquish_alloc_permit", "cp", "shift")
    if data and (instr.shape is None or instr.num is None):
        return f"tcgen05.{instr.kind} needs a shape and a .num"
    if not data and (instr.shape and instr.kind != "cp" or instr.num or instr.pack or instr.red_op
                     or instr.abs or instr.nan):
        return f"tcgen05.{instr.kind} takes no {'.num' if instr.kind == 'cp' else 'shape, .num'}, packing or reduction"
    if instr.kind == "shift" and not instr.down:
        return "tcgen05.shift needs .down"
    if managing and instr.cta_group not in (1, 2):
        return f"tcgen05.{instr.kind} needs .cta_group::1 or .cta_group::2"
    if not managing and instr.cta_group is not None:
        return f"tcgen05.{instr.kind} takes no .cta_group"
    if instr.shared_cta and instr.kind != "alloc":
        return f"tcgen05.{instr.kind} takes no .shared::cta"
    wants_b32 = instr.kind in ("ld", "st", "alloc", "dealloc")
    if wants_b32 and instr.type != "b32":
        return f"tcgen05.{instr.kind} is typed .b32, not {'.' + instr.type if instr.type else 'untyped'}"
    if instr.kind in ("relinquish_alloc_permit", "wait::ld", "wait::st", "cp", "shift") and instr.type:
        return f"tcgen05.{instr.kind} takes no type"
    return None


OPERAND_TYPES = rule(
    "tmem.instruction.operands", "PTX 9.7.16.7.1; PTX 9.7.16.8.3; PTX 9.7.16.8.4",
    "taddr of ld/st/ld.red is a .b32 register, [%r] or [%r+imm]; taddr of dealloc a .b32 register or an "
    "immediate; the destination vector of ld/ld.red and redval are .b32 registers; the source vector of st "
    "holds .b32 registers and integer constants, at least one register; immHalfSplitoff is an immediate; nCols is "
    "a .b32 register or an immediate; the dst of alloc is a shared-memory address ([name], [name+imm], "
    "[%r], [%rd]), not an immediate; taddr of cp/shift is [%r] or [%r+imm], s-desc of cp a .b64 "
    "register or an immediate.",
    subject="tmem_instruction", enforced_by="ptxas",
    note="ptxas 13.0: \"Arguments mismatch for instruction 'tcgen05.ld'\" for [%rd], [imm], {%rd...} or a "
         "register immHalfSplitoff; \"Result register required for instruction 'tcgen05.ld'\" for an immediate "
         "in ld's vector; it assembles st with constants in its source vector ({%r8, 0}, {0, 0, 0, %r1}) but "
         "not with constants only ({0, 0}: \"Arguments mismatch\"); "
         "\"Immediate addresses allowed only for .local state space\" for alloc [imm]; "
         "for cp/shift it refuses [%rd], [name] and a .b32 s-desc (\"Arguments mismatch\"), accepts an immediate "
         "s-desc, and crashes (SIGSEGV, no message, no output) on an immediate address [imm].")


def _is_b32_or_imm(op: Optional[Operand]) -> bool:
    return op is not None and op.kind in ("b32", "imm")


@OPERAND_TYPES.checker
def _operand_types(instr: TmemInstruction):
    if instr.kind in ("ld", "ld.red", "st"):
        if instr.taddr.value.kind != "b32":
            return f"taddr {instr.taddr.text} is not a .b32 register (with an optional offset)"
        allowed = ("b32", "imm") if instr.kind == "st" else ("b32",)
        bad = [o.text for o in instr.vector.items if o.kind not in allowed]
        if bad:
            return f"the register vector holds {bad[0]}, not a .b32 register" + (
                " or an integer constant" if instr.kind == "st" else "")
        if instr.vector.items and not any(o.kind == "b32" for o in instr.vector.items):
            return "the source vector holds constants only; ptxas wants at least one .b32 register"
        redval = instr.redval
        if redval is not None and redval.kind == "vector" and len(redval.items) == 1:
            redval = redval.items[0]                  # ptxas 13.0 accepts {%r} as redval
        if redval is not None and redval.kind != "b32":
            return f"redval {instr.redval.text} is not a .b32 register"
        if instr.half_splitoff is not None and instr.half_splitoff.kind != "imm":
            return f"immHalfSplitoff {instr.half_splitoff.text} is not an immediate"
    if instr.kind == "dealloc" and not _is_b32_or_imm(instr.taddr):
        return f"taddr {instr.taddr.text} is not a 32-bit register"
    if instr.kind in ("alloc", "dealloc") and isinstance(instr.ncols, str) and not instr.ncols.startswith("%r") \
            or isinstance(instr.ncols, str) and instr.ncols.startswith("%rd"):
        return f"nCols {instr.ncols} is not a .b32 register or an immediate"
    if instr.kind == "alloc" and instr.dst.value.kind not in ("b32", "b64", "shared"):
        return f"dst {instr.dst.text} is not a shared-memory address"
    if instr.kind in ("cp", "shift") and instr.taddr.value.kind != "b32":
        return f"taddr {instr.taddr.text} is not a .b32 register (with an optional offset)"
    if instr.kind == "cp" and instr.sdesc.kind not in ("b64", "imm"):
        return f"s-desc {instr.sdesc.text} is not a .b64 register or an immediate"
    return None


# tcgen05.cp / tcgen05.shift: rule tmem.address.range looks at the cells they write (or shift) as well.
@tmem_address.ADDRESS_RANGE.checker(subject="tmem_instruction")
def _copy_in_range(instr: TmemInstruction):
    if instr.kind not in ("cp", "shift") or instr.address_value is None:
        return None
    if instr.kind == "cp":
        if instr.shape not in tmem_cp.SHAPES or instr.multicast not in tmem_cp.SHAPE_MULTICASTS[instr.shape]:
            return None
        cells = tmem_cp.cp_footprint(instr.shape, instr.multicast, instr.address_value)
    else:
        cells = tmem_shift.shift_footprint(instr.address_value)
    outside = sorted(cell for cell in cells if not tmem_address.in_range(*cell))
    if outside:
        return (f"tcgen05.{instr.kind} touches {len(outside)} cells outside {tmem_address.LANES} x "
                f"{tmem_address.COLUMNS}, first (lane, column) = {outside[0]}")
    return None


# --- From text to an access, and the check --------------------------------------------------------------
def to_access(instr: TmemInstruction, target: str = "sm_100a", address: Optional[int] = None,
              warp: int = 0) -> ld_st.TmemAccess:
    """The TmemAccess of an ld/st/ld.red (address: the value of taddr, 0 when unknown)."""
    if instr.kind not in ("ld", "st", "ld.red"):
        raise SpecError("instruction", instr.text, "not a tcgen05.ld/st/ld.red", SYNTAX.id)
    lane, column = tmem_address.decode(address or 0)
    splitoff = instr.half_splitoff.value if instr.half_splitoff is not None and \
        instr.half_splitoff.kind == "imm" else (0 if instr.half_splitoff is not None else None)
    red_type = instr.type if instr.kind == "ld.red" else None
    return ld_st.TmemAccess(op=instr.kind, shape=instr.shape or "", num=instr.num, lane=lane, column=column,
                            warp=warp, pack=instr.pack, half_splitoff=splitoff,
                            registers=len(instr.vector.items), target=target, red_op=instr.red_op,
                            red_type=red_type, abs=instr.abs, nan=instr.nan)


_RUN_TIME_ACCESS_RULES = ("tmem.address.range", "tmem.access.lane_quarter", "tmem.ld.lane_alignment")


def check(text: str, target: str, ptx_version: str = "9.0", *, warp: Optional[int] = None,
          address: Optional[int] = None) -> dict:
    """{"ptxas_accepts": bool, "violations": [Violation] (rules ptxas enforces), "undefined": [Violation]
    (broken rules ptxas lets through)}. A text that names a tcgen05 instruction but is not written as PTX's
    syntax has it breaks rule tmem.instruction.syntax alone; SpecError for a text that is no tcgen05
    instruction, one not modelled (mma, commit, fence), an operand outside the convention, a bad target. `address` (the value of taddr) and `warp` (the issuing warp) let
    the run-time rules of an ld/st be checked (taddr + any [%r+imm] offset is the caller's to add)."""
    if target not in TARGETS:
        raise SpecError("target", target, "expected one of " + " ".join(TARGETS), TARGET.id)
    try:
        instr = replace(parse(text), target=target, ptx_version=parse_version(ptx_version))
    except PtxSyntaxError as error:
        # ptxas refuses a text it cannot parse before it checks anything else (target, version, ...)
        unparsed = TmemInstruction(kind="", text=text, syntax=error.problem)
        return {"ptxas_accepts": False, "violations": check_all("tmem_instruction", unparsed, only=[SYNTAX.id]),
                "undefined": []}
    if instr.kind in ("cp", "shift"):
        base = instr.taddr.value
        known = (base.value + instr.taddr.offset) % (1 << 32) if base.kind == "imm" else address
        instr = replace(instr, address_value=known)
    broken = list(check_all("tmem_instruction", instr))
    if instr.kind in ("ld", "st", "ld.red"):
        known = address
        access = to_access(instr, target, known, warp or 0)
        skip = set()
        if known is None:
            skip.update(_RUN_TIME_ACCESS_RULES)
        if warp is None:
            skip.add("tmem.access.lane_quarter")
        broken += [v for v in check_all("tmem_access", access) if v.rule.id not in skip]
    seen, unique = set(), []
    for v in broken:
        if (v.rule.id, v.message) not in seen:
            seen.add((v.rule.id, v.message))
            unique.append(v)
    violations = [v for v in unique if v.rule.enforced_by == "ptxas"]
    undefined = [v for v in unique if v.rule.enforced_by != "ptxas"]
    return {"ptxas_accepts": not violations, "violations": violations, "undefined": undefined}
