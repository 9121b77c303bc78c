"""The data movement a kernel states: each TMA operation and each mbarrier operation, read from its
statement (the static form) and from the executor's visits (the values, per warp and iteration).

PTX ISA 9.0 sections, as the forms are written there:
* 9.7.9.25.5.1 cp.async.bulk.tensor (load: global -> shared; store: shared -> global):
      cp.async.bulk.tensor.DIM.DST.SRC{.LOAD_MODE}.COMPLETION{.multicast::cluster}{.cta_group::N}
          {.level::cache_hint}  [dstMem], [tensorMap, {coords}], [mbar]{, im2colInfo}{, ctaMask}{, policy}
      cp.async.bulk.tensor.DIM.global.shared::cta{.LOAD_MODE}.bulk_group{.level::cache_hint}
          [tensorMap, {coords}], [srcMem]{, policy}
* 9.7.9.25.5.2 cp.reduce.async.bulk.tensor (the store form, with a reduction);
* 9.7.9.25.5.3 cp.async.bulk.prefetch.tensor: [tensorMap, {coords}]{, im2colInfo}{, policy};
* 9.7.13.15 mbarrier: .init [addr], count; .expect_tx [addr], txCount; .arrive{.expect_tx} state, [addr]
  {, count | txCount}; .try_wait / .test_wait{.parity} waitComplete, [addr], phaseParity | state.

An operand that names a kernel parameter's address (cvta.param of the parameter's symbol) is traced back
through the moves that carry it (`tensormap_source`): that is how every compiler in the corpus hands its
tensor maps to TMA (Triton, CuTe DSL and TileLang as .param .b8 [128] arrays, CUTLASS inside its Params
struct, at an offset).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from solver.kernel.concrete.memory import ADDRESS
from solver.kernel.concrete.values import Unknown
from solver.kernel.frontend.instruction import destinations, parse_integer, registers_in

TMA_OPCODE = re.compile(r"^(cp\.async\.bulk\.tensor|cp\.reduce\.async\.bulk\.tensor|cp\.async\.bulk\.prefetch\.tensor)"
                        r"(\.|$)")
BARRIER_OPCODE = re.compile(r"^mbarrier\.(init|expect_tx|arrive_drop|arrive|try_wait|test_wait)(\.|$)")
_DIM = re.compile(r"^([1-5])d$")
_MAP_AND_COORDS = re.compile(r"^\[\s*([%\w$.]+)\s*,\s*\{([^}]*)\}\s*\]$")


def is_recorded(ins) -> bool:
    """The statements the audit follows (the run keeps their visits)."""
    return TMA_OPCODE.match(ins.opcode) is not None or BARRIER_OPCODE.match(ins.opcode) is not None


@dataclass(frozen=True)
class TmaForm:
    """One cp.async.bulk.tensor statement, as written."""
    line: int
    text: str
    kind: str                      # "load", "store", "reduce" or "prefetch"
    rank: int
    mode: str                      # "tile", "im2col", "im2col::w", "im2col::w::128", "tile::gather4", ...
    multicast: bool
    cta_group: int
    tensormap: str                 # the operand that holds the map's address (a register)
    coordinates: tuple             # operand texts
    smem: Optional[str]            # the shared-memory operand ([dstMem] of a load, [srcMem] of a store)
    mbarrier: Optional[str]        # [mbar] of a load
    cta_mask: Optional[str]


@dataclass(frozen=True)
class BarrierForm:
    """One mbarrier statement, as written."""
    line: int
    text: str
    kind: str                      # "init", "expect_tx", "arrive", "arrive.expect_tx", "arrive_drop", "wait"
    address: str                   # [addr]
    amount: Optional[str]          # init: the count; expect_tx / arrive.expect_tx: the bytes; arrive: a count
    parity: Optional[str]          # wait: the phase parity operand (None: waits on a state, not a parity)


class FormError(ValueError):
    """A statement of these families whose operands do not read as the manual writes them."""


def tma_form(ins) -> TmaForm:
    modifiers = ins.opcode.split(".")
    family = TMA_OPCODE.match(ins.opcode).group(1)
    rest = modifiers[len(family.split(".")):]
    rank = next((int(m.group(1)) for m in map(_DIM.match, rest) if m), None)
    if rank is None:
        raise FormError(f"line {ins.line}: no .1d-.5d dimension in {ins.opcode}")
    mode = next((m for m in rest if m.startswith(("tile", "im2col"))), "tile")
    group = next((m for m in rest if m.startswith("cta_group::")), "cta_group::1")
    operands = list(ins.operands)
    if family == "cp.async.bulk.prefetch.tensor":
        kind = "prefetch"
    elif family == "cp.reduce.async.bulk.tensor":
        kind = "reduce"
    else:
        kind = "store" if len(rest) > 1 and rest[1] == "global" else "load"     # .DIM.DST.SRC
    multicast = "multicast::cluster" in rest
    if kind == "load":
        if len(operands) < 3:
            raise FormError(f"line {ins.line}: a TMA load takes [dstMem], [tensorMap, coords], [mbar]")
        smem, target, mbarrier = operands[0], operands[1], operands[2]
        tail = operands[3:]
        if mode.startswith("im2col") and tail and tail[0].startswith("{"):
            tail = tail[1:]                          # im2colInfo: the offsets
        cta_mask = tail[0] if multicast and tail else None
    else:
        target = operands[0] if operands else ""
        smem = operands[1] if kind in ("store", "reduce") and len(operands) > 1 else None
        mbarrier, cta_mask = None, None
    m = _MAP_AND_COORDS.match(target.strip())
    if m is None:
        raise FormError(f"line {ins.line}: the tensor operand {target!r} is not [tensorMap, {{coordinates}}]")
    coordinates = tuple(c.strip() for c in m.group(2).split(",") if c.strip())
    if len(coordinates) != rank:
        raise FormError(f"line {ins.line}: {len(coordinates)} coordinates for a .{rank}d copy")
    return TmaForm(ins.line, ins.text, kind, rank, mode, multicast, int(group.split("::")[1]), m.group(1),
                   coordinates, smem, mbarrier, cta_mask)


def barrier_form(ins) -> BarrierForm:
    operation = BARRIER_OPCODE.match(ins.opcode).group(1)
    operands = list(ins.operands)
    address_at = next((k for k, o in enumerate(operands) if o.strip().startswith("[")), None)
    if address_at is None:
        raise FormError(f"line {ins.line}: {ins.opcode} names no [address]")
    after = operands[address_at + 1:]
    amount, parity = None, None
    if operation in ("try_wait", "test_wait"):
        kind = "wait"
        parity = after[0] if after and ins.has("parity") else None
    elif operation == "arrive" and ins.has("expect_tx"):
        kind, amount = "arrive.expect_tx", (after[0] if after else None)
    else:
        kind, amount = operation, (after[0] if after else None)
    if kind in ("init", "expect_tx", "arrive.expect_tx") and amount is None:
        raise FormError(f"line {ins.line}: {ins.opcode} without its count")
    return BarrierForm(ins.line, ins.text, kind, operands[address_at], amount, parity)


def value_of(operand: str, values: dict, width_mask: int = (1 << 64) - 1):
    """An immediate or a register operand's value in a visit (int), or an Unknown saying why not."""
    operand = operand.strip()
    number = parse_integer(operand)
    if number is not None:
        return number & width_mask
    value = values.get(operand)
    if isinstance(value, int):
        return value
    if value == "varying":
        return Unknown(f"{operand}: the lanes that execute it hold different values")
    return value if isinstance(value, Unknown) else Unknown(f"{operand}: no value recorded")


def address_of(operand: str, values: dict, symbols: dict):
    """The shared-memory address of [reg], [reg+imm], [symbol], [symbol+imm] in a visit, or an Unknown."""
    m = ADDRESS.match(operand.strip())
    if m is None:
        return Unknown(f"{operand}: not an [address] operand")
    base_text, sign, offset_text = m.groups()
    offset = parse_integer(offset_text) if offset_text else 0
    if offset is None:
        return Unknown(f"{operand}: an offset that is no integer")
    base = symbols[base_text] if base_text in symbols else value_of(base_text, values)
    if isinstance(base, Unknown):
        return base
    return (base - offset if sign == "-" else base + offset) & 0xFFFFFFFF


# --- which parameter holds a tensor map --------------------------------------------------------------------

_CARRIES = ("mov", "cvt", "cvta")
MAX_TRACE = 64


@dataclass(frozen=True)
class ParamSource:
    param: str                     # the .param symbol
    offset: int                    # bytes into it (CUTLASS: a map inside its Params struct)


def tensormap_source(statements: list, params: list, register: str):
    """(ParamSource, None) when `register` holds the generic address of a kernel parameter plus a
    constant, through single writes of mov / cvt / cvta.param / add of an immediate; else (None, why)."""
    writers: dict = {}
    for s in statements:
        if s.instruction is not None:
            for name in destinations(s.instruction):
                writers.setdefault(name, []).append(s.instruction)
    offset, name = 0, register
    for _ in range(MAX_TRACE):
        if name in params:
            return ParamSource(name, offset), None
        written = writers.get(name, [])
        if len(written) != 1:
            return None, (f"{name} is written {len(written)} times: the map's parameter is not traced "
                          "(built in the kernel, or chosen at run time)" if written else
                          f"{name} is never written: the map's parameter is not traced")
        ins = written[0]
        operands = ins.operands[1:]
        if ins.base in _CARRIES and len(operands) == 1:
            source = operands[0].strip()
        elif ins.base == "add" and len(operands) == 2 and parse_integer(operands[1]) is not None:
            source, offset = operands[0].strip(), offset + parse_integer(operands[1])
        elif ins.base == "ld" and ins.has("param"):
            return None, (f"line {ins.line}: the map's address is loaded from a parameter (a pointer to a "
                          "map in global memory): its contents are not the kernel's to state")
        else:
            return None, f"line {ins.line}: the map's address comes from {ins.opcode}, not traced"
        if ins.base == "cvta" and not ins.has("param"):
            return None, f"line {ins.line}: {ins.opcode} is no param-space address"
        if parse_integer(source) is not None:
            return None, f"line {ins.line}: the map's address is a constant"
        name = source
    return None, f"more than {MAX_TRACE} moves carry the map's address"


# --- an MMA's accumulator: which one, and whether this MMA adds to it -----------------------------------------

def accumulator(ins, values: dict) -> tuple:
    """(the accumulator this MMA writes, whether it adds to what the accumulator holds: True, False, or
    None when the run does not know). wgmma.mma_async (PTX ISA 9.7.15.5.2): `d, a, b, [sp-meta, sp-sel,]
    scale-d, ...`, D = A x B + D when scale-d is 1, D = A x B when 0; the accumulator is d's registers.
    tcgen05.mma (9.7.16.10.9): `[d-tmem], a, b, idesc, [scale-a, scale-b | disable-output-lane]...,
    enable-input-d`, the accumulator the tensor-memory address d."""
    operands = list(ins.operands)
    if ins.opcode.startswith("wgmma"):
        key = ("registers", operands[0].replace(" ", ""))
        flag_text = operands[5 if ins.has("sp") else 3] if len(operands) > 3 else None
    else:
        address = address_of(operands[0], values, {})
        key = ("tmem", address if isinstance(address, int) else None)
        rest = [o for o in operands[4:] if not o.strip().startswith(("[", "{"))]
        flag_text = rest[0] if rest else None
    if flag_text is None or key[1] is None:
        return key, None
    negated = flag_text.strip().startswith("!")
    flag = value_of(flag_text.strip().lstrip("!"), values, 1)
    if not isinstance(flag, int):
        return key, None
    return key, bool(flag) != negated


_WGMMA_ACCUMULATOR = re.compile(r"wgmma\.mma_async[\w.:]*\s+\{([^}]*)\}")


def accumulator_registers(text: str) -> frozenset:
    """The registers of every wgmma.mma_async's accumulator vector d in the text."""
    return frozenset(r for m in _WGMMA_ACCUMULATOR.finditer(text) for r in registers_in(m.group(1)))


def writes_accumulator(ins, accumulators: frozenset) -> bool:
    """Whether an instruction other than an MMA writes a register of a wgmma accumulator (a reset, or a
    rescale, that ends the accumulation audit.gemm.same_tile follows)."""
    if not accumulators or ins.opcode.startswith(("wgmma", "tcgen05.mma")):
        return False
    return any(r in accumulators for r in destinations(ins))
