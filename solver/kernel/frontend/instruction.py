"""One PTX instruction statement, split into guard, opcode and operands (PTX ISA 4.4 "Instruction
Statements": [@{!}p] opcode{.modifiers} operands;), and the registers it writes.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, fields
from functools import cached_property, lru_cache
from typing import Optional

from spec.ptx_operands import split_operands      # (the one splitter; the fast reader takes it from here)

# Type modifiers and their widths (PTX ISA 5.2.2 Table 9, fundamental types).
TYPE_BITS = {"b8": 8, "b16": 16, "b32": 32, "b64": 64, "b128": 128, "u8": 8, "u16": 16, "u32": 32, "u64": 64,
             "s8": 8, "s16": 16, "s32": 32, "s64": 64, "f16": 16, "f16x2": 32, "bf16": 16, "bf16x2": 32,
             "f32": 32, "f32x2": 64, "f64": 64, "pred": 1}
INTEGER_TYPES = {name for name in TYPE_BITS if name[0] in "bus" and name != "b128"} | {"pred"}

# Opcodes whose first operand is not a register they write (it is a source, a label, a barrier id or
# absent). Everything else that names registers first writes them.
NO_DESTINATION = {"bar", "barrier", "fence", "membar", "bra", "brx", "call", "ret", "exit", "trap", "st", "stmatrix",
                  "red", "cp", "prefetch", "prefetchu", "nanosleep", "pmevent", "griddepcontrol", "setmaxnreg",
                  "tensormap", "multimem", "applypriority", "discard", "wgmma", "tcgen05", "mbarrier"}
WRITES_IN_FAMILY = {"wgmma": ("wgmma.mma_async",), "tcgen05": ("tcgen05.ld",),
                    "mbarrier": ("mbarrier.arrive", "mbarrier.test_wait", "mbarrier.try_wait", "mbarrier.pending_count")}

# A guard names a predicate by any PTX identifier (PTX ISA 4.3: [a-zA-Z][a-zA-Z0-9_$]* or [_$%] followed by
# one or more of those), with or without '%': FlashAttention-4's kernels guard with `@leader_thread`.
_GUARD = re.compile(r"@(!?)\s*([A-Za-z][\w$]*|[_$%][\w$]+)\s+")
# PTX ISA 4.5.1 integer constants: decimal, 0x hex, 0b binary, octal with a leading 0, optionally U
_INTEGER = re.compile(r"^(-?)(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9]\d*)[uU]?$")
# PTX ISA 4.5.2 floating-point constants as their bits (0f + 8 hex digits, 0d + 16), a symbol with an
# optional constant offset (4.6: `name+4`), a .reg declaration's type and declarators (5.1.1)
FLOAT_BITS = re.compile(r"^0([fFdD])([0-9a-fA-F]+)$")
SYMBOL_OFFSET = re.compile(r"^([A-Za-z_$][\w$]*)\s*(?:([+-])\s*(\d+|0[xX][0-9a-fA-F]+))?$")
REG_DECLARATION = re.compile(r"\.reg\s+(?:\.v\d\s+)?\.(\w+)\s+(.*)")
INTEGER_CHARACTERS = 100    # an integer literal longer than this (no 64-bit one is) reads as unknown
# A register operand: any identifier (PTX ISA 4.4; registers need no '%': `.reg .pred complete;`), with a
# .x/.y/.z/.w component on special registers. Numbers start with a digit and are never matched.
_REGISTER = re.compile(r"(?<![\w$])%?[A-Za-z_$][\w$]*(?:\.[xyzw])?")


@dataclass(frozen=True)
class Instruction:
    line: int
    text: str
    guard: Optional[str]          # the predicate register of @p / @!p
    guard_negated: bool
    opcode: str                   # e.g. "add.s32", "tcgen05.mma.cta_group::1.kind::f16"
    operands: tuple               # raw operand texts

    def __getstate__(self) -> dict:
        """Its fields only: not its cached properties (made again where asked, from the fields), nor what the
        executors keep on it (plans of functions, which do not pickle). A process that reads functions
        sends them to another (analysis.read_apart): an eighth less to send, read back in two thirds of the time."""
        return {name: self.__dict__[name] for name in _FIELDS}

    @cached_property
    def base(self) -> str:
        return self.opcode.split(".")[0]

    @cached_property
    def modifiers(self) -> tuple:
        return tuple(self.opcode.split(".")[1:])

    def has(self, modifier: str) -> bool:
        return modifier in self.modifiers

    def types(self) -> list:
        """The type modifiers, in order (cvt.u64.u32 -> ["u64", "u32"])."""
        return list(self._types)

    @cached_property
    def _types(self) -> tuple:
        return tuple(m for m in self.modifiers if m in TYPE_BITS)

    @cached_property
    def width(self) -> int:
        """The width of the instruction's (last) type modifier; 32 when it has none."""
        found = self.types()
        return TYPE_BITS[found[-1]] if found else 32


_FIELDS = tuple(f.name for f in fields(Instruction))


def parse_instruction(line: int, text: str) -> Instruction:
    guard, negated = None, False
    m = _GUARD.match(text)
    if m:
        negated, guard = m.group(1) == "!", m.group(2)
        text_rest = text[m.end():]
    else:
        text_rest = text
    opcode, _, rest = text_rest.partition(" ")
    return Instruction(line, text, guard, negated, opcode, split_operands(rest))


def registers_in(operand: str) -> list:
    return _REGISTER.findall(operand)


def destinations(ins: Instruction) -> list:
    """The registers the instruction writes: its first operand's (a register, a vector {..} of them, or
    p|q), unless the opcode writes none. (Kept on the instruction once computed: the executors ask often.)"""
    found = ins.__dict__.get("_destinations")
    if found is None:
        found = ins.__dict__["_destinations"] = _destinations(ins)
    return found


def _destinations(ins: Instruction) -> list:
    if ins.base == "call" and len(ins.operands) > 1 and ins.operands[0].startswith("("):
        # PTX ISA 9.7.12.2 call: `call (ret-params), func, (params)` writes its return parameters, which
        # may be registers of a .func with .reg returns
        return [r for r in registers_in(ins.operands[0]) if r != "_"]
    if not ins.operands or ins.base in NO_DESTINATION and not _family_writes(ins):
        return []
    first = ins.operands[0]
    if first.startswith("[") or first.startswith("("):
        return []
    if first.startswith("{") or "|" in first or _REGISTER.fullmatch(first):
        return [r for r in registers_in(first) if r != "_"]
    return []


def _family_writes(ins: Instruction) -> bool:
    return any(ins.opcode.startswith(prefix + ".") or ins.opcode == prefix
               for prefix in WRITES_IN_FAMILY.get(ins.base, ()))


@lru_cache(maxsize=1 << 16)
def parse_integer(text: str) -> Optional[int]:
    if len(text) > INTEGER_CHARACTERS:
        return None
    m = _INTEGER.match(text.strip())
    if not m:
        return None
    digits = m.group(2)
    if digits.lower().startswith("0x"):
        value = int(digits, 16)
    elif digits.lower().startswith("0b"):
        value = int(digits[2:], 2)
    elif len(digits) > 1 and digits.startswith("0"):
        value = int(digits, 8)
    else:
        value = int(digits)
    return -value if m.group(1) else value


MAX_VECTOR_PARTS = 8        # PTX ISA 5.4.2: vectors of 2, 4 (and, for some instructions, 8) elements


def packing(ins: Instruction, width_of) -> Optional[tuple]:
    """How a mov moves its bits (PTX ISA 9.7.9.6 mov, 9.7.9.10 packing; the first part is the lowest):
    ("plain", [destination], [width]) for a mov of one value, ("pack", parts, widths) for
    `mov.bN d, {a, b, ...}`, ("unpack", parts, widths) for `mov.bN {a, b, ...}, s` (a part "_" is a sink);
    None when the parts' widths do not add up to the instruction's, or there are more than
    MAX_VECTOR_PARTS of them: no packing the evaluators know."""
    destination, source = ins.operands[0], ins.operands[1]
    vector = source if source.startswith("{") else destination if destination.startswith("{") else None
    if vector is None:
        return "plain", [destination], [ins.width]
    parts = [part.strip() for part in vector.strip("{} ").split(",")]
    if len(parts) > MAX_VECTOR_PARTS:
        return None
    widths = [width_of(part) for part in parts]
    if sum(widths) != ins.width:
        return None
    return ("pack" if vector is source else "unpack"), parts, widths

