"""Every iteration: what the concrete executor (concrete/executor.py) saw at each site, per warp.

For each site: the warps that reached it, and for each operand register the distinct values it held over
every visit (every iteration of every loop holding it), or why a value is unknown. Warps that reached the
same sites and stopped for the same reason form one warp role. The values hold for the launch the run was
given (the parameters, the CTA position, the block), not for every launch.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Optional

from solver.kernel.concrete.executor import Launch, Run, Unknown

MAX_VALUES_SHOWN = 64          # distinct values listed per operand (the count is always given)
MAX_VISITS_LISTED = 4096       # visits listed per site in JSON (--json), the count always given


@dataclass
class OperandValues:
    text: str
    distinct: list = field(default_factory=list)     # ints, in order of first appearance
    unknown: Optional[str] = None                    # the first reason a visit held no value
    visits: int = 0

    @property
    def known(self) -> bool:
        return self.visits > 0 and self.unknown is None


@dataclass
class SiteIterations:
    function: str
    line: int
    warps: list                                      # warp indexes that reached it
    visits: list                                     # executor.Visit
    operands: dict                                   # register text -> OperandValues
    complete: bool = True                            # every warp that reached it ran to the function's end


def summarise(run: Run, statements: list) -> dict:
    """(function, line) -> SiteIterations, for every site statement the run reached."""
    by_site: "OrderedDict[int, list]" = OrderedDict()
    for visit in run.visits:
        by_site.setdefault(visit.statement, []).append(visit)
    out = {}
    for index, visits in by_site.items():
        operands: dict = {}
        for visit in visits:
            for name, value in visit.values.items():
                found = operands.setdefault(name, OperandValues(name))
                found.visits += 1
                if isinstance(value, Unknown):
                    found.unknown = found.unknown or value.reason
                elif value == "varying":
                    found.unknown = found.unknown or "the lanes of the warp hold different values"
                elif value not in found.distinct:
                    found.distinct.append(value)
        line = statements[index].line
        warps = sorted({v.warp for v in visits})
        stopped = {w.warp for w in run.warps if w.stopped is not None}
        out[(run.function, line)] = SiteIterations(run.function, line, warps, visits, operands,
                                                   not stopped & set(warps))
    return out


def any_launch_sets(function, per_warp: list) -> dict:
    """(function, line) -> {register: frozenset | Top}: valuesets.WarpSets of every warp, joined. A warp that
    gave up (a work bound) has no sets, and any site may be one it reaches with other values: every
    register of every site is then Top, with its reason (the others' sets are not every value)."""
    from solver.kernel.symbolic.valuesets import Top, join
    out: dict = {}
    for warp in per_warp:
        if warp.gave_up:
            continue
        for index, registers in warp.sites.items():
            into = out.setdefault((function.name, function.statements[index].line), {})
            for name, value in registers.items():
                into[name] = join(into[name], value) if name in into else value
    gave_up = next((warp for warp in per_warp if warp.gave_up), None)
    if gave_up is not None:
        top = Top(f"warp {gave_up.warp} has no sets ({gave_up.gave_up})")
        out = {site: {name: top for name in registers} for site, registers in out.items()}
    return out


def any_launch_document(sets: Optional[dict], registers: dict) -> Optional[dict]:
    """{role: {"register", "known", "count", "values", "unknown"}} of one site, or None when not run."""
    if sets is None:
        return None
    from solver.kernel.symbolic.valuesets import Top
    out = {}
    for role, text in registers.items():
        value = sets.get(text)
        if value is None:
            continue
        known = not isinstance(value, Top)
        ordered = sorted(value) if known else []
        out[role] = {"register": text, "known": known, "count": len(ordered),
                     "values": [f"{v:#018x}" for v in ordered[:MAX_VALUES_SHOWN]],
                     "unknown": None if known else value.reason}
    return out


def warp_roles(run: Run) -> list:
    """Warps that reached the same sites and ended the same way: [{warps, site_lines, stopped}]."""
    reached: dict = {}
    for visit in run.visits:
        reached.setdefault(visit.warp, set()).add(visit.line)
    roles: "OrderedDict[tuple, list]" = OrderedDict()
    for warp in run.warps:
        key = (tuple(sorted(reached.get(warp.warp, ()))), warp.stopped)
        roles.setdefault(key, []).append(warp.warp)
    return [{"warps": warps, "site_lines": list(lines), "stopped": stopped}
            for (lines, stopped), warps in roles.items()]


def start_pattern(starts: list) -> Optional[str]:
    """The start addresses one warp fed an operand, visit after visit, as a formula in the visit count n
    when they follow one: "0x400 + 0x4000*(n mod 4)", "0x420 + 0x20*n", or one value. A description of
    what the run saw (checked against every visit), not a proof for other launches."""
    if not starts:
        return None
    if len(set(starts)) == 1:
        return f"{starts[0]:#x}"
    for period in range(2, min(len(starts), MAX_VALUES_SHOWN) + 1):
        cycle = starts[:period]
        step = cycle[1] - cycle[0]
        if all(starts[i] == cycle[i % period] for i in range(len(starts))) and \
                all(cycle[j] == cycle[0] + step * j for j in range(period)) and len(starts) > period:
            return f"{cycle[0]:#x} + {step:#x}*(n mod {period})" if step >= 0 else None
    step = starts[1] - starts[0]
    if all(starts[i] == starts[0] + step * i for i in range(len(starts))):
        return f"{starts[0]:#x} + {step:#x}*n" if step >= 0 else f"{starts[0]:#x} - {-step:#x}*n"
    return None


def warp_ranges(warps: list) -> str:
    """[0, 1, 2, 3, 8] -> "0-3, 8"."""
    parts, start = [], None
    for k, w in enumerate(warps):
        if start is None:
            start = w
        if k + 1 == len(warps) or warps[k + 1] != w + 1:
            parts.append(f"{start}" if start == w else f"{start}-{w}")
            start = None
    return ", ".join(parts)


def launch_document(launch: Launch, run: Optional[Run]) -> dict:
    return {"params": dict(launch.params), "cta": list(launch.cta), "grid": list(launch.grid) if launch.grid else None,
            "cluster": list(launch.cluster) if launch.cluster else None,
            "block": list(run.block) if run is not None else None}


def site_document(found: Optional[SiteIterations], registers: dict, sets: Optional[dict] = None,
                  start_of=None) -> Optional[dict]:
    """The JSON of a site's iterations: registers: role -> the register text of that operand; sets: the
    site's any-launch sets (valuesets); start_of: a descriptor word -> its start address (spec.mma)."""
    any_launch = any_launch_document(sets, registers)
    if found is None:
        return None if any_launch is None else {"warps": [], "visits": 0, "complete": False, "operands": {},
                                                 "start_patterns": {},
                                                 "per_visit": [], "per_visit_cut": False, "any_launch": any_launch}
    operands = {}
    for role, text in registers.items():
        values = found.operands.get(text)
        if values is None:
            continue
        operands[role] = {"register": text, "known": values.known, "count": len(values.distinct),
                          "distinct": [f"{v:#018x}" for v in values.distinct[:MAX_VALUES_SHOWN]],
                          "unknown": values.unknown, "visits": values.visits}
    patterns = {}
    for role, text in registers.items():
        if role == "idesc":
            continue
        per_warp = {}
        for visit in found.visits:
            value = visit.values.get(text)
            if isinstance(value, int) and start_of is not None:
                per_warp.setdefault(visit.warp, []).append(start_of(value))
        found_patterns = {start_pattern(starts) for starts in per_warp.values()}
        if len(found_patterns) == 1 and None not in found_patterns and per_warp:
            patterns[role] = found_patterns.pop()
    visits = [{"warp": v.warp, "iteration": list(v.iteration),
               **{role: _shown(v.values.get(text)) for role, text in registers.items() if text in v.values}}
              for v in found.visits[:MAX_VISITS_LISTED]]
    return {"warps": found.warps, "visits": len(found.visits), "complete": found.complete, "operands": operands,
            "start_patterns": patterns, "per_visit": visits,
            "per_visit_cut": len(found.visits) > MAX_VISITS_LISTED, "any_launch": any_launch}


def _shown(value):
    if isinstance(value, int):
        return f"{value:#018x}"
    if isinstance(value, Unknown):
        return None
    return value
