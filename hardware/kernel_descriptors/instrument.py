"""Instrument a PTX kernel so that every warp writes the descriptors it feeds each wgmma.mma_async.

Used by hardware/record_kernel_descriptors.py (issue 26). Pure text work, no GPU: the output is PTX that
ptxas assembles, with one extra kernel parameter (the record buffer, a .u64 global pointer appended to
the entry's parameter list) and, after every `wgmma.mma_async` statement, a scoped block in which lane 0
of each warp of the recorded CTAs stores one 32-byte record and every lane increments a per-warp
counter (a function-scope register set to 0 at entry).

Record buffer layout (little-endian):

    records: (cta * warps_per_cta + warp) * max_per_warp + seq, 32 bytes each, for cta < record_ctas:
        +0  u64  descriptor a (0 when A comes from registers; flags bit 0 clear)
        +8  u64  descriptor b
        +16 u32  line: the 1-based line of the wgmma statement in the original PTX
        +20 u32  seq: the warp's sequence number of this MMA (0, 1, ...)
        +24 u32  flags: RECORD_MAGIC | (1 if a is a descriptor)
        +28 u32  site: the 0-based index of the wgmma statement in the file
    header, at record_ctas * warps_per_cta * max_per_warp * 32, 8 bytes per (cta, warp):
        +0  u32  how many wgmma the warp issued (also past max_per_warp: then records were dropped)
        +4  u32  the shared-window address of the kernel's .extern .shared array (0 if it has none)

A record is written only when the wgmma itself runs: a guarded `@p wgmma` guards its record and its
count alike. The CTA index is linear (x + nx * (y + ny * z)); the warp is %tid.x / 32 (1-D blocks).
"""
from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from typing import List, Optional, Tuple

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from spec.ptx_operands import split_operands  # noqa: E402  (the project's one operand splitter)

RECORD_BYTES = 32
HEADER_BYTES = 8
RECORD_MAGIC = 0x5EC0_0000
A_IS_DESCRIPTOR = 1

PARAM_NAME_SUFFIX = "_lp_record"

_ENTRY = re.compile(r"\.entry\s+([A-Za-z_$%][\w$]*)\s*\(")
_EXTERN_SHARED = re.compile(r"\.extern\s+\.shared\s+(?:\.align\s+\d+\s+)?\.b8\s+([A-Za-z_$][\w$]*)\s*\[\s*\]")
_GUARD = re.compile(r"^\s*@(!?)\s*(%?[A-Za-z_$][\w$]*)\s+")
_VERSION = re.compile(r"^\s*\.version\s+(\d+)\.(\d+)\s*$", re.M)


@dataclass
class Site:
    index: int            # 0-based position among the file's wgmma.mma_async statements
    line: int             # 1-based line of the statement's opcode in the original text
    opcode: str           # e.g. wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16
    a: Optional[str]      # the A descriptor operand, None when A is a register vector
    b: str                # the B descriptor operand
    guard: Optional[Tuple[bool, str]] = None   # (negated, predicate) of an `@p` / `@!p` guard


@dataclass
class Instrumented:
    text: str
    entry: str
    param: str                     # name of the record-buffer parameter added to the entry
    sites: List[Site] = field(default_factory=list)
    extern_shared: Optional[str] = None


def _code(line: str) -> str:
    """A line without its // comment (PTX block comments do not occur in these files' code lines)."""
    cut = line.find("//")
    return line if cut < 0 else line[:cut]


def find_sites(lines: List[str]) -> List[Tuple[int, int, int, Site]]:
    """Every wgmma.mma_async statement: (first line index, last line index, column after its ';', Site)."""
    found = []
    i = 0
    while i < len(lines):
        code = _code(lines[i])
        at = code.find("wgmma.mma_async")
        if at < 0:
            i += 1
            continue
        # the statement runs from its guard/opcode to the first ';' (possibly on a later line)
        start_text = code[:at]
        guard = None
        m = _GUARD.match(start_text + "wgmma ")
        if m and start_text.strip():
            guard = (m.group(1) == "!", m.group(2))
        elif start_text.strip():
            raise ValueError(f"line {i + 1}: unexpected text before wgmma.mma_async: {start_text!r}")
        body, j = code[at:], i
        while ";" not in body:
            j += 1
            if j >= len(lines):
                raise ValueError(f"line {i + 1}: wgmma.mma_async statement without ';'")
            body += " " + _code(lines[j])
        statement = body[:body.index(";")]
        semicolon_col = len(_code(lines[j])) - len(_code(lines[j]).split(";", 1)[1]) if j > i else \
            at + len(statement) + 1
        opcode, _, operand_text = statement.strip().partition(" ")
        operands = split_operands(operand_text)
        if len(operands) < 3:
            raise ValueError(f"line {i + 1}: wgmma.mma_async with {len(operands)} operands")
        a = None if operands[1].startswith("{") else operands[1]
        b = operands[2]
        if b.startswith("{"):
            raise ValueError(f"line {i + 1}: B operand is not a descriptor: {b!r}")
        found.append((i, j, semicolon_col, Site(len(found), i + 1, opcode, a, b, guard)))
        i = j + 1
    return found


def _entry_bounds(lines: List[str]) -> Tuple[str, int, int]:
    """(entry name, index of the line closing its parameter list, index of the body's opening '{')."""
    entries = [(k, m.group(1)) for k, l in enumerate(lines) for m in [_ENTRY.search(_code(l))] if m]
    if len(entries) != 1:
        raise ValueError(f"expected one .entry, found {len(entries)}")
    k, name = entries[0]
    close = next(x for x in range(k, len(lines)) if _code(lines[x]).strip().startswith(")"))
    brace = next(x for x in range(close, len(lines)) if _code(lines[x]).strip() == "{")
    return name, close, brace


def instrument(text: str, *, warps_per_cta: int, max_per_warp: int, record_ctas: int = 2,
               ptx_version: Optional[str] = None) -> Instrumented:
    """The instrumented copy of `text` (see the module docstring). `ptx_version`, e.g. "9.0", rewrites
    the .version directive (ptxas 13.0 reads PTX up to 9.0; Triton 3.9 writes 9.4)."""
    lines = text.split("\n")
    entry, close, brace = _entry_bounds(lines)
    sites = find_sites(lines)
    if not sites:
        raise ValueError("no wgmma.mma_async in the file")
    shared = None
    for l in lines:
        m = _EXTERN_SHARED.search(_code(l))
        if m:
            shared = m.group(1)
            break
    param = entry + PARAM_NAME_SUFFIX
    records_bytes = record_ctas * warps_per_cta * max_per_warp * RECORD_BYTES
    if max_per_warp * RECORD_BYTES >= 1 << 32:
        raise ValueError("max_per_warp too large")

    # declarations after the body's leading .reg lines
    decl_end = brace + 1
    while decl_end < len(lines) and (_code(lines[decl_end]).strip().startswith(".reg")
                                     or not _code(lines[decl_end]).strip()):
        decl_end += 1
    init = [
        "\t// ---- layoutproof descriptor recorder (hardware/kernel_descriptors/instrument.py) ----",
        "\t.reg .b32 \t%lp_cnt;",
        "\t.reg .b64 \t%lp_base;",
        "\t.reg .b64 \t%lp_hdr;",
        "\t.reg .pred \t%lp_on;",
        "\t{",
        "\t.reg .b32 \t%lp_t<8>;",
        "\t.reg .b64 \t%lp_d<3>;",
        "\t.reg .pred \t%lp_p0;",
        "\tmov.u32 \t%lp_cnt, 0;",
        f"\tld.param.u64 \t%lp_d0, [{param}];",
        "\tcvta.to.global.u64 \t%lp_d0, %lp_d0;",
        "\tmov.u32 \t%lp_t0, %tid.x;",
        "\tshr.u32 \t%lp_t1, %lp_t0, 5;",
        "\tand.b32 \t%lp_t2, %lp_t0, 31;",
        "\tmov.u32 \t%lp_t3, %ctaid.z;",
        "\tmov.u32 \t%lp_t4, %nctaid.y;",
        "\tmov.u32 \t%lp_t5, %ctaid.y;",
        "\tmad.lo.u32 \t%lp_t3, %lp_t3, %lp_t4, %lp_t5;",
        "\tmov.u32 \t%lp_t4, %nctaid.x;",
        "\tmov.u32 \t%lp_t5, %ctaid.x;",
        "\tmad.lo.u32 \t%lp_t3, %lp_t3, %lp_t4, %lp_t5;",
        "\tsetp.eq.u32 \t%lp_p0, %lp_t2, 0;",
        f"\tsetp.lt.and.u32 \t%lp_on, %lp_t3, {record_ctas}, %lp_p0;",
        f"\tmad.lo.u32 \t%lp_t6, %lp_t3, {warps_per_cta}, %lp_t1;",
        f"\tmul.wide.u32 \t%lp_d1, %lp_t6, {max_per_warp * RECORD_BYTES};",
        "\tadd.s64 \t%lp_base, %lp_d0, %lp_d1;",
        f"\tmul.wide.u32 \t%lp_d2, %lp_t6, {HEADER_BYTES};",
        f"\tadd.s64 \t%lp_d2, %lp_d2, {records_bytes};",
        "\tadd.s64 \t%lp_hdr, %lp_d0, %lp_d2;",
        (f"\tmov.u32 \t%lp_t7, {shared};" if shared else "\tmov.u32 \t%lp_t7, 0;"),
        "\t@%lp_on st.global.v2.u32 \t[%lp_hdr], {%lp_cnt, %lp_t7};",
        "\t}",
        "\t// ---- end of recorder set-up ----",
    ]

    def site_block(site: Site) -> List[str]:
        flags = RECORD_MAGIC | (A_IS_DESCRIPTOR if site.a is not None else 0)
        out = [
            f"\t// ---- layoutproof record: wgmma site {site.index}, original line {site.line} ----",
            "\t{",
            "\t.reg .pred \t%lp_q;",
            "\t.reg .pred \t%lp_h;",
            "\t.reg .b64 \t%lp_x;",
            "\t.reg .b64 \t%lp_va;",
            "\t.reg .b64 \t%lp_vb;",
            "\t.reg .b32 \t%lp_w<4>;",
            (f"\tmov.b64 \t%lp_va, {site.a};" if site.a is not None else "\tmov.b64 \t%lp_va, 0;"),
            f"\tmov.b64 \t%lp_vb, {site.b};",
            f"\tmov.u32 \t%lp_w0, {site.line};",
            "\tmov.u32 \t%lp_w1, %lp_cnt;",
            f"\tmov.u32 \t%lp_w2, {flags};",
            f"\tmov.u32 \t%lp_w3, {site.index};",
            f"\tsetp.lt.and.u32 \t%lp_q, %lp_cnt, {max_per_warp}, %lp_on;",
            "\tmov.pred \t%lp_h, %lp_on;",
        ]
        run = "%lp_h"
        if site.guard is not None:
            negated, pred = site.guard
            out += ["\t{", "\t.reg .pred \t%lp_g;",
                    (f"\tnot.pred \t%lp_g, {pred};" if negated else f"\tmov.pred \t%lp_g, {pred};"),
                    "\tand.pred \t%lp_q, %lp_q, %lp_g;",
                    "\tand.pred \t%lp_h, %lp_h, %lp_g;",
                    "\t@%lp_g add.u32 \t%lp_cnt, %lp_cnt, 1;",
                    "\t}"]
        else:
            out += ["\tadd.u32 \t%lp_cnt, %lp_cnt, 1;"]
        out += [
            f"\tmul.wide.u32 \t%lp_x, %lp_w1, {RECORD_BYTES};",
            "\tadd.s64 \t%lp_x, %lp_x, %lp_base;",
            "\t@%lp_q st.global.v2.u64 \t[%lp_x], {%lp_va, %lp_vb};",
            "\t@%lp_q st.global.v4.u32 \t[%lp_x+16], {%lp_w0, %lp_w1, %lp_w2, %lp_w3};",
            f"\t@{run} st.global.u32 \t[%lp_hdr], %lp_cnt;",
            "\t}",
            "\t// ---- end of record ----",
        ]
        return out

    out: List[str] = []
    by_last_line = {j: (col, site) for (_i, j, col, site) in sites}
    for k, line in enumerate(lines):
        if k == close:
            # the line closing the parameter list: append the record buffer after the last parameter
            prev = len(out) - 1
            while not out[prev].strip():
                prev -= 1
            out[prev] = out[prev].rstrip() + ","
            out.append(f"\t.param .u64 .ptr .global .align 8 {param}")
        if k == decl_end:
            out.extend(init)
        if k in by_last_line:
            col, site = by_last_line[k]
            head, tail = line[:col], line[col:]
            out.append(head)
            out.extend(site_block(site))
            if tail.strip():
                out.append(tail)
            continue
        out.append(line)
    result = "\n".join(out)
    if ptx_version is not None:
        result, n = _VERSION.subn(f".version {ptx_version}", result, count=1)
        if n != 1:
            raise ValueError("no .version directive")
    return Instrumented(result, entry, param, [s for (_i, _j, _c, s) in sites], shared)


def ptx_version(text: str) -> Optional[str]:
    m = _VERSION.search(text)
    return f"{m.group(1)}.{m.group(2)}" if m else None


def entry_params(text: str) -> List[Tuple[str, str, int]]:
    """The entry's parameters in order: (name, kind, bytes) with kind "u32", "u64" or "bytes"."""
    lines = text.split("\n")
    entry, close, _ = _entry_bounds(lines)
    start = next(k for k, l in enumerate(lines) if _ENTRY.search(_code(l)))
    params = []
    decl = " ".join(_code(l) for l in lines[start:close + 1])
    decl = decl[decl.index("(") + 1:decl.rindex(")")]
    for part in decl.split(","):
        part = part.strip()
        if not part:
            continue
        name_m = re.search(r"([A-Za-z_$][\w$]*)\s*(\[\s*(\d+)\s*\])?\s*$", part)
        name = name_m.group(1)
        if name_m.group(2):
            params.append((name, "bytes", int(name_m.group(3))))
        elif re.search(r"\.(u|b|s)64\b", part):
            params.append((name, "u64", 8))
        elif re.search(r"\.(u|b|s)32\b", part):
            params.append((name, "u32", 4))
        else:
            raise ValueError(f"parameter of unknown type: {part!r}")
    return params
