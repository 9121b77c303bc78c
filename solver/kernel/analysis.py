"""From PTX text to its MMA sites: parse, evaluate every function, collect each wgmma.mma_async and
tcgen05.mma with what is known of its operands (the entry point of `layoutproof ptx`)."""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import Optional

from spec.rule import SpecError, one_line, shown

from solver.kernel.symbolic import evaluate
from solver.kernel import mma
from solver.kernel.frontend import source


@dataclass
class Analysis:
    module: source.Module
    sites: list                  # mma.Site, in file order
    functions: list              # names of the functions evaluated
    smem_base: int
    shared: dict                 # function -> {symbol: address}
    unread: list = field(default_factory=list)   # MMA statements in the file that are no site: {line, text, reason}


def analyse(text: str, smem_base: int = evaluate.DEFAULT_SMEM_BASE, kernel: Optional[str] = None,
            params: Optional[dict] = None) -> Analysis:
    if smem_base < 0 or smem_base >= 1 << 32:
        raise SpecError("smem_base", smem_base, "a shared address: 0 <= N < 2^32", source.RULE)
    module = source.parse(text)
    functions = module.functions
    if kernel is not None:
        functions = [f for f in functions if f.name == kernel]
        if not functions:
            names = ", ".join(f.name for f in module.functions) or "none"
            raise SpecError("kernel", kernel, f"no .entry or .func of that name; the file has: {shown(names)}",
                            source.RULE)
    sites, shared = [], {}
    for function in functions:
        context = evaluate.Context(module, function, smem_base, dict(params or {}))
        shared[function.name] = dict(context.symbols)

        def visit(ins, machine, loop, name=function.name):
            family = "wgmma" if ins.opcode.startswith("wgmma") else "tcgen05"
            arch, arch_from = source.arch_of_targets(module.targets, family)
            sites.append(mma.read_site(ins, machine, name, arch, arch_from, loop))

        evaluate.walk(context, visit)
    unread = unread_mma_statements(text, module.functions, sites,
                                   None if kernel is None else {f.name for f in functions})
    return Analysis(module, sites, [f.name for f in functions], smem_base, shared, unread)


# Nothing silent: every MMA opcode in the text is a site, or is listed as unread with its line and why. The
# opcodes are counted on the text itself (comments removed, nothing else parsed), apart from the statement
# reader and the evaluator, so that an instruction they miss (a guard they do not read, a statement they
# split wrongly) shows. PTX ISA 9.7.15.5 (wgmma.mma_async), 9.7.16.10 (tcgen05.mma and its forms).
MMA_OPCODE = re.compile(r"(?<![\w$.%])(wgmma\.mma_async|tcgen05\.mma)(?![\w$])")


def unread_mma_statements(text: str, functions: list, sites: list, asked: Optional[set] = None) -> list:
    """The MMA opcodes of the text that no site was read from: [{"line", "text", "reason"}], in file order.
    `functions`: every function of the module; `asked`: the names of those evaluated (None: all, and the
    opcodes outside every function count too). An occurrence belongs to the statement that starts last at
    or before its line; a site's statement accounts for one opcode."""
    stripped = source.strip_comments(text)
    owners = sorted(((statement.line, i, function, statement) for i, function in enumerate(functions)
                     for statement in function.statements), key=lambda owner: owner[:2])
    starts = [owner[0] for owner in owners]
    site_statements = {(site.function, site.line) for site in sites}
    read = set(site_statements)
    unread, line, at = [], 1, 0
    for match in MMA_OPCODE.finditer(stripped):
        line += stripped.count("\n", at, match.start())
        at = match.start()
        here = bisect.bisect_right(starts, line) - 1
        function, statement = owners[here][2:] if here >= 0 else (None, None)
        if function is not None and function.line > line:
            function = None                                       # before the first function
        if asked is not None and (function is None or function.name not in asked):
            continue                                              # not asked for (--kernel)
        key = (function.name, statement.line) if function is not None else None
        if key in read:
            read.discard(key)
            continue
        if function is None:
            shown_text, reason = _line_at(stripped, match.start()), \
                "outside the functions read: no statement of an .entry or .func holds it"
        elif key in site_statements:
            shown_text = _line_at(stripped, match.start())
            reason = (f"past the MMA read at line {statement.line}, the last statement the reader found before "
                      "it (outside a function, or a statement the reader did not split off)")
        else:
            shown_text = statement.text
            reason = (f"the statement was not read as an MMA (its opcode reads as "
                      f"{shown_text.split(' ', 1)[0]!r}), or the evaluator did not reach it")
        unread.append({"line": line, "text": one_line(shown_text, 120), "reason": reason})
    return unread


def _line_at(text: str, offset: int) -> str:
    """The line of `text` that holds `offset`, stripped."""
    end = text.find("\n", offset)
    return text[text.rfind("\n", 0, offset) + 1:end if end >= 0 else len(text)].strip()


def parse_params(assignments: list) -> dict:
    """--param NAME=N (repeatable): the value an ld.param of NAME reads."""
    from spec.rule import parse_number
    params = {}
    for text in assignments or []:
        name, sep, value = text.partition("=")
        try:
            params[name.strip()] = parse_number(value)
        except ValueError:
            sep = ""
        if not sep or not name.strip():
            raise SpecError("param", text, "expected NAME=N (N decimal or 0x-hex)", source.RULE)
    return params
