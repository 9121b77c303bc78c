"""From PTX text to its MMA sites: parse, evaluate every function, collect each wgmma.mma_async and
tcgen05.mma with what is known of its operands (the entry point of `layoutproof ptx`)."""
from __future__ import annotations

import bisect
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Optional

from spec.rule import SpecError, one_line, shown

from solver.shell import MAX_JOBS

from solver.kernel.symbolic import evaluate, valuesets
from solver.kernel import iterations as iterations_mod
from solver.kernel import collector, mma
from solver.kernel.concrete import executor
from solver.kernel.frontend import cfg, source


@dataclass
class Analysis:
    module: source.Module
    sites: list                  # mma.Site, in file order
    functions: list              # names of the functions evaluated
    smem_base: int
    shared: dict                 # function -> {symbol: address}
    unread: list = field(default_factory=list)   # site statements in the file that are no site: {line, text, reason}
    others: list = field(default_factory=list)   # TMA and tcgen05 data-movement sites: {function, line, family, text}
    runs: dict = field(default_factory=dict)     # function -> executor.Run (every iteration), or the reason none
    iterations: dict = field(default_factory=dict)   # (function, line) -> iterations.SiteIterations
    launch: Optional[executor.Launch] = None
    any_launch: dict = field(default_factory=dict)   # (function, line) -> {register: frozenset | valuesets.Top}
    tracers: dict = field(default_factory=dict)      # function -> the executor.Tracer its run was given


def analyse(text: str, smem_base: int = evaluate.DEFAULT_SMEM_BASE, kernel: Optional[str] = None,
            params: Optional[dict] = None, launch: Optional[executor.Launch] = None,
            max_steps: int = executor.MAX_STEPS_PER_WARP, any_launch: str = "needed", record=None,
            mark=None, tracer=None, extent=None, jobs: int = 1) -> Analysis:
    """Parse, evaluate each function's first iteration over partly known words (symbolic/evaluate.py),
    run it for every warp of one CTA over every iteration (concrete/executor.py) with the launch given
    (its params default to `params`), and the sets of values of every iteration for any launch
    (symbolic/valuesets.py): any_launch "needed" where the run stopped or left a descriptor unknown,
    "always", or "never". `record(instruction)`: more statements whose visits the run keeps (the audit's
    barrier operations), beside the sites; `mark(instruction)`: statements whose visits are kept without
    their operands joining the run's slice (executor.run's is_marker); `tracer(function)`: an
    executor.Tracer for the function's run (the audit's epilogue), kept in Analysis.tracers;
    `extent(function)`: the run's extent (executor.run: the bytes a TMA load writes).

    jobs: the functions are evaluated in that many forked processes (evaluated() below), each function
    in one, with the same results as one process gives: nothing a function's evaluation reads is
    another's. Each worker reads the functions it evaluates and sends them back with their results
    (read_apart below); where the reader reads the module whole, or a kernel is asked for, this process
    reads the module first (_read_whole). One process where there is one function, where a tracer is
    given (it is kept, with its state, in Analysis.tracers), or where the platform cannot fork."""
    if any_launch not in ("needed", "always", "never"):
        raise ValueError(f"any_launch: needed, always or never, not {any_launch!r}")
    if not 1 <= jobs <= MAX_JOBS:
        raise SpecError("jobs", jobs, f"1 to {MAX_JOBS} processes", source.RULE)
    if smem_base < 0 or smem_base >= 1 << 32:
        raise SpecError("smem_base", smem_base, "a shared address: 0 <= N < 2^32", source.RULE)
    launch = launch or executor.Launch(params=dict(params or {}))
    work = _Work(None, smem_base, dict(params or {}), launch, max_steps, any_launch, record, mark, tracer, extent)
    jobs = 1 if tracer is not None else jobs
    module, functions, results, occurrences = read_apart(work, text, kernel, jobs) or \
        _read_whole(work, text, kernel, jobs)
    sites, shared, runs, found, sets, tracers = [], {}, {}, {}, {}, {}
    for function, result in zip(functions, results):
        sites += result.sites
        shared[function.name] = result.shared
        runs[function.name] = result.run
        found.update(result.found)
        sets.update(result.sets)
        if result.tracer is not None:
            tracers[function.name] = result.tracer
    with collector.paused():            # (a list of every statement: no cycle, collector.py)
        others = other_sites(functions)
        read = [(site.function, site.line) for site in sites] + [(o["function"], o["line"]) for o in others]
        unread = unread_statements(text, module.functions, read,
                                   None if kernel is None else {f.name for f in functions}, tuple(module.unread),
                                   occurrences)
    return Analysis(module, sites, [f.name for f in functions], smem_base, shared, unread, others, runs, found, launch,
                    sets, tracers)


def _read_whole(work: "_Work", text: str, kernel: Optional[str], jobs: int) -> tuple:
    """(module, the functions asked for, their FunctionResults, None): the module read here, then its
    functions evaluated (evaluated(): here, or in forked processes)."""
    module = source.parse(text)
    work.module = module
    functions = module.functions
    if kernel is not None:
        functions = [f for f in functions if f.name == kernel]
        if not functions:
            names = ", ".join(f.name for f in module.functions) or "none"
            raise SpecError("kernel", kernel, f"no .entry or .func of that name; the file has: {shown(names)}",
                            source.RULE)
    return module, functions, evaluated(work, functions, jobs), None


def read_apart(work: "_Work", text: str, kernel: Optional[str], jobs: int) -> Optional[tuple]:
    """What _read_whole gives, with each function read in the forked process that evaluates it, and sent
    back with its result (unpickling a function costs a sixth of reading it), while this process finds the
    site opcodes of the text (site_occurrences): reading is then spread over the processes too. None
    where that is not done: one process, a platform that cannot fork, a module the reader reads whole
    (source.parse_apart), --kernel, fewer than two functions, or a body declined (the whole module is
    then read by the grammar, and _read_whole does it all). The errors are one process's: the reading
    errors first, in file order (source.ModuleApart.assemble), then the first evaluation error in file
    order."""
    if jobs <= 1 or kernel is not None or not _can_fork():
        return None
    apart = source.parse_apart(text)
    if apart is None or len(apart.names) < 2:
        return None
    work.module = apart.head

    def occurrences_here() -> tuple:                # (while the workers work: unread_statements')
        with collector.paused():
            return site_occurrences(text)
    read, occurrences = _in_forked_processes((work, apart), _evaluate_apart,
                                             [apart.size(k) for k in range(len(apart.names))], jobs, occurrences_here)
    if any(found is None for found in read):
        return None                                          # a body declined
    module = apart.assemble([found.read_error or found.function for found in read])
    for found in read:
        if found.error is not None:
            raise found.error
    work.module = module
    return module, module.functions, [found.result for found in read], occurrences


@dataclass
class _ReadApart:
    """What a worker sends back for one function: the function read, or the SpecError parse() raises
    reading it; then its result, or the error its evaluation raised."""
    function: Optional[source.Function] = None
    read_error: Optional[SpecError] = None
    result: Optional["FunctionResult"] = None
    error: Optional[Exception] = None


def _evaluate_apart(k: int) -> Optional[_ReadApart]:
    """In a forked process: function k read (None where its body is declined), then evaluated."""
    work, apart = _FORKED
    try:
        function = apart.function(k)
    except SpecError as error:
        return _ReadApart(read_error=error)
    if function is None:
        return None
    try:
        return _ReadApart(function, result=_evaluate_collected(work, function))
    except Exception as error:                     # (raised in file order by the first process)
        return _ReadApart(function, error=error)


@dataclass
class _Work:
    """What every function's evaluation is given (analyse's arguments)."""
    module: source.Module
    smem_base: int
    params: dict
    launch: executor.Launch
    max_steps: int
    any_launch: str
    record: object
    mark: object
    tracer: object
    extent: object


@dataclass
class FunctionResult:
    """One function's part of the Analysis."""
    sites: list
    shared: dict
    run: object                   # executor.Run, or the reason there is none
    found: dict                   # (function, line) -> iterations.SiteIterations
    sets: dict                    # (function, line) -> {register: frozenset | valuesets.Top}
    tracer: object = None


def evaluate_function(work: _Work, function) -> FunctionResult:
    """The first iteration (evaluate.walk), the run of every warp, and the any-launch sets where needed, of
    one function."""
    module = work.module
    context = evaluate.Context(module, function, work.smem_base, dict(work.params))
    shared = dict(context.symbols)
    sites = []

    def visit(ins, machine, loop):
        family = "wgmma" if ins.opcode.startswith("wgmma") else "tcgen05"
        arch, arch_from = source.arch_of_targets(module.targets, family)
        sites.append(mma.read_site(ins, machine, function.name, arch, arch_from, loop))

    evaluate.walk(context, visit)
    launch = work.launch
    if launch.block is None and not (function.directives.get(".reqntid") or function.directives.get(".maxntid")):
        return FunctionResult(sites, shared, "not run: the function declares no .reqntid or .maxntid (give --block)",
                              {}, {})
    run_graph = cfg.build(function.statements)
    record = work.record
    recorded = _is_site if record is None else (lambda ins: _is_site(ins) or record(ins))
    tracer = work.tracer(function) if work.tracer is not None else None
    run = executor.run(function, shared, launch, recorded, run_graph, max_steps=work.max_steps,
                       is_marker=work.mark, tracer=tracer,
                       extent=None if work.extent is None else work.extent(function))
    summary = iterations_mod.summarise(run, function.statements)
    sets = {}
    if work.any_launch == "always" or (work.any_launch == "needed" and not _run_knows_everything(run, summary, sites)):
        sets = iterations_mod.any_launch_sets(function, valuesets.run(function, shared, launch, _is_mma, run_graph))
    return FunctionResult(sites, shared, run, summary, sets, tracer)


_FORKED: Optional[tuple] = None     # (work, functions) or (work, ModuleApart) in a forked worker: inherited,
                                    # never pickled


def _evaluate_forked(index: int) -> FunctionResult:
    work, functions = _FORKED
    return _evaluate_collected(work, functions[index])


def _evaluate_collected(work: _Work, function) -> FunctionResult:
    """evaluate_function with Python's cyclic collector paused, then run over what it made (collector.py):
    its passes otherwise walk the whole module and every result before, again and again."""
    with collector.paused(collect_after=True):
        return evaluate_function(work, function)


def evaluated(work: _Work, functions: list, jobs: int = 1) -> list:
    """evaluate_function for each function, in order: here, or in `jobs` forked processes. A worker
    inherits the parsed module (fork: nothing of it is pickled) and sends back its function's result."""
    jobs = min(jobs, len(functions))
    if jobs <= 1 or not _can_fork():
        return [_evaluate_collected(work, function) for function in functions]
    return _in_forked_processes((work, functions), _evaluate_forked, [len(f.statements) for f in functions],
                                jobs)[0]


def _can_fork() -> bool:
    import multiprocessing
    return "fork" in multiprocessing.get_all_start_methods()


def _in_forked_processes(shared: tuple, task, sizes: list, jobs: int, meanwhile=None) -> tuple:
    """([task(k) for each k of sizes], meanwhile()): the tasks run in `jobs` forked processes, the largest
    (sizes[k]) handed out first, so the last to finish is a small one; each worker inherits `shared` as
    _FORKED (fork: nothing of it is pickled); meanwhile() runs here while they work. Where tasks raise,
    the first in order raises here, whichever finished first."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    global _FORKED
    _FORKED = shared
    every = range(len(sizes))
    try:
        with ProcessPoolExecutor(min(jobs, len(sizes)), mp_context=multiprocessing.get_context("fork")) as pool, \
                collector.paused(collect_after=True):       # (the results as they come back: collector.py)
            pending = {k: pool.submit(task, k) for k in sorted(every, key=lambda k: -sizes[k])}
            extra = meanwhile() if meanwhile is not None else None
            return [pending[k].result() for k in every], extra
    finally:
        _FORKED = None


def _run_knows_everything(run, summary: dict, sites: list) -> bool:
    """Every warp ran to the end and every descriptor of every MMA site is known at every visit: the any-
    launch sets would add nothing the run does not show (they are then not computed)."""
    if any(w.stopped is not None for w in run.warps):
        return False
    for site in sites:
        seen = summary.get((site.function, site.line))
        for op in site.operands.values():
            if op.source == "descriptor":
                values = seen.operands.get(op.text) if seen is not None else None
                if values is None or not values.known:
                    return False
    return True


def _is_mma(ins) -> bool:
    """The sites whose values the any-launch sets follow: the MMAs' descriptors (TMA coordinates depend on
    the CTA and the problem, and are never a small set)."""
    return ins.opcode.startswith(("wgmma.mma_async", "tcgen05.mma"))


def _is_site(ins) -> bool:
    return opcode_family(ins.opcode) is not None


# Nothing silent: every statement of these opcodes in the text is a site, or is listed as unread with its
# line and why. The opcodes are counted on the text itself (comments removed, nothing else parsed), apart
# from the grammar and the evaluator, so that an instruction they miss shows. PTX ISA 9.0: 9.7.15.5
# (wgmma.mma_async), 9.7.16 (tcgen05.mma, .ld, .st, .cp, .shift, .alloc), 9.7.9.25 (cp.async.bulk.tensor),
# 9.7.9.27 (tensormap.replace).
MMA_OPCODE = re.compile(r"(?<![\w$.%])(wgmma\.mma_async|tcgen05\.mma)(?![\w$])")
SITE_OPCODE = re.compile(r"(?<![\w$.%])(wgmma\.mma_async|tcgen05\.mma|tcgen05\.(?:ld|st|cp|shift|alloc)|"
                         r"cp\.async\.bulk\.tensor|tensormap\.replace)(?![\w$])")


def opcode_family(opcode: str) -> Optional[str]:
    """The site family an opcode belongs to (tcgen05.mma.cta_group::1.kind::f16 -> tcgen05.mma), or None."""
    m = SITE_OPCODE.match(opcode)
    if m is None or (m.end() < len(opcode) and opcode[m.end()] != "."):
        return None
    return m.group(1)


def other_sites(functions: list) -> list:
    """The statements of the families other than the MMAs: {function, line, family, text}, in file order."""
    found = []
    for function in functions:
        for statement in function.statements:
            ins = statement.instruction
            family = opcode_family(ins.opcode) if ins is not None else None
            if family is not None and family not in ("wgmma.mma_async", "tcgen05.mma"):
                found.append({"function": function.name, "line": statement.line, "family": family,
                              "text": one_line(statement.text, 160)})
    return found


def site_occurrences(text: str) -> tuple:
    """(the text with its comments blanked, [(line, offset) of each site opcode in it]), in file order."""
    stripped = source.strip_comments(text)
    found, line, at = [], 1, 0
    for match in SITE_OPCODE.finditer(stripped):
        line += stripped.count("\n", at, match.start())
        at = match.start()
        found.append((line, at))
    return stripped, found


def unread_statements(text: str, functions: list, read: list, asked: Optional[set] = None,
                      not_parsed: tuple = (), occurrences: Optional[tuple] = None) -> list:
    """The site opcodes of the text that no site was read from: [{"line", "text", "reason"}], in file order.
    `functions`: every function of the module; `read`: (function name, statement line) of every site, one
    per site; `asked`: the names of the functions evaluated (None: all, and the opcodes outside every
    function count too); `not_parsed`: what the grammar could not read (syntax.Unread), listed as it is.
    An occurrence belongs to the statement that starts last at or before its line; a site accounts for one
    occurrence of its statement."""
    stripped, occurrences = occurrences or site_occurrences(text)
    owners = [(statement.line, i, function, statement) for i, function in enumerate(functions)
              for statement in function.statements]
    starts = [owner[0] for owner in owners]
    if starts != sorted(starts):        # (a module's functions and statements come in line order: no sort)
        owners.sort(key=lambda owner: owner[:2])
        starts = [owner[0] for owner in owners]
    left = Counter(read)
    cut = {u.line: u for u in not_parsed}          # (few: grammar.MAX_UNREAD at most)
    unread = [{"line": u.line, "text": one_line(u.text, 120), "reason": u.reason} for u in not_parsed]
    for line, start in occurrences:
        if _in_cut(cut, stripped, line):
            continue                                              # listed already: the grammar's reason
        here = bisect.bisect_right(starts, line) - 1
        function, statement = owners[here][2:] if here >= 0 else (None, None)
        if function is not None and function.line > line:
            function = None                                       # before the first function
        if asked is not None and (function is None or function.name not in asked):
            continue                                              # not asked for (--kernel)
        key = (function.name, statement.line) if function is not None else None
        if left[key] > 0:
            left[key] -= 1
            continue
        if function is None:
            shown_text, reason = _line_at(stripped, start), \
                "outside the functions read: no statement of an .entry or .func holds it"
        elif key in left:
            shown_text = _line_at(stripped, start)
            reason = (f"past the site read at line {statement.line}, the last statement the reader found before "
                      "it (outside a function, or a statement the reader did not split off)")
        elif statement.line == line:
            shown_text = statement.text
            reason = (f"the statement was not read as a site (its opcode reads as "
                      f"{shown_text.split(' ', 1)[0]!r}), or the evaluator did not reach it")
        else:
            shown_text = _line_at(stripped, start)
            reason = (f"no statement the reader found starts on this line (the last before it is at line "
                      f"{statement.line})")
        unread.append({"line": line, "text": one_line(shown_text, 120), "reason": reason})
    return sorted(unread, key=lambda u: u["line"])


def _in_cut(cut: dict, text: str, line: int) -> bool:
    """Whether the line is in a statement the grammar could not read (syntax.Unread, lines first..last)."""
    return any(u.line <= line <= u.last_line for u in cut.values())


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
