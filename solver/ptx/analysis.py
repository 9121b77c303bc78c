"""From PTX text to its MMA sites: parse, evaluate every function, collect each wgmma.mma_async and
tcgen05.mma with what is known of its operands (the entry point of `layoutproof ptx`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from spec.rule import SpecError, shown

from solver.ptx import evaluate, mma, source


@dataclass
class Analysis:
    module: source.Module
    sites: list                  # mma.Site, in file order
    functions: list              # names of the functions evaluated
    smem_base: int
    shared: dict                 # function -> {symbol: address}


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
    return Analysis(module, sites, [f.name for f in functions], smem_base, shared)


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
