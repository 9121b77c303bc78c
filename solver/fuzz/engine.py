"""Compiler fuzzing: configurations that break exactly the rules asked for, labelled.

A *target* is one kind of configuration a compiler builds (a descriptor with its tile, the arguments of
a tensor-map encoder, a whole TMA + MMA recipe, one tcgen05 instruction, a kernel's tensor-memory
allocations). For each target a module (solver/fuzz/<target>.py, a '-' in the name read as '_')
gives:
  * RULE_IDS, the catalogue rules a configuration of that kind can break;
  * generate(arch, violate, count, seed): the cases, each breaking exactly `violate` (a frozenset of
    rule ids; empty = valid), found with Z3 over that target's constraints and varied by sampling; the
    same arguments give the same cases;
  * label(case, arch): what the concrete executor (spec/) says of a case: the rules it breaks, what
    it leads to (solver/fuzz/outcome.py) and the witness.

Every case goes out as a Record (docs/CLI.md `fuzz`): {"target", "arch", "violates", "outcome", "witness",
"case"} plus "rules" (each broken rule's id, source and statement) and "index". The labels come from
spec/, never from the generator: a case whose spec label is not exactly the asked rules is dropped
(counted in Stats.rejected), and a Z3 solution that spec labels otherwise is a model/spec disagreement
(Stats.disagreements), which the tests require to be empty.
"""
from __future__ import annotations

import hashlib
import importlib
import json
import random
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Iterator, Optional, Sequence

from spec.rules import SpecError, all_rules

from solver.fuzz.outcome import Label

TARGETS = ("desc", "tensormap", "recipe", "tmem", "tmem-alloc", "triton-nvmma", "cute-dsl", "scales")


@dataclass
class Stats:
    """What a generation run did: cases emitted, candidates spec dropped, Z3 solutions that spec
    labelled differently (disagreements: bugs in the model or in spec), anchors solved."""
    emitted: int = 0
    rejected: int = 0
    anchors: int = 0
    disagreements: list = field(default_factory=list)


def target_module(target: str):
    if target not in TARGETS:
        raise ValueError(f"target {target!r}: expected one of {', '.join(TARGETS)}")
    return importlib.import_module(f"solver.fuzz.{target.replace('-', '_')}")


@lru_cache(maxsize=None)
def _catalogue() -> dict:
    return {r.id: r for r in all_rules()}


def rule_info(rule_id: str) -> dict:
    r = _catalogue()[rule_id]
    return {"id": r.id, "source": r.source, "statement": r.statement, "evidence": r.evidence}


def record(target: str, arch: str, index: int, case: dict, label: Label) -> dict:
    """The jsonl line of one case (docs/CLI.md `fuzz`), with the broken rules' sources."""
    return {"index": index, "target": target, "arch": arch, "violates": list(label.violates),
            "outcome": label.outcome, "witness": label.witness, "case": case,
            "rules": [rule_info(rule_id) for rule_id in label.violates]}


def parse_violate(target: str, text: Optional[str]) -> frozenset:
    """--violate RULE[,RULE...] -> rule ids; ValueError naming the rule when it is not one of the
    target's."""
    if not text:
        return frozenset()
    module = target_module(target)
    wanted = [part.strip() for part in text.split(",") if part.strip()]
    for rule_id in wanted:
        if rule_id not in module.RULE_IDS:
            raise ValueError(f"--violate: {rule_id!r} is not a rule of target {target} "
                             f"(`layoutproof fuzz --coverage` lists them)")
    return frozenset(wanted)


def generate(target: str, arch: str, violate: frozenset, count: int, seed: int,
             stats: Optional[Stats] = None) -> Iterator[dict]:
    """Up to `count` records of `target` on `arch`, each breaking exactly `violate`; fewer when the space
    runs out (Stats says so), none when no configuration breaks exactly those rules."""
    module = target_module(target)
    stats = stats if stats is not None else Stats()
    for index, (case, label) in enumerate(module.generate(arch, frozenset(violate), count, seed, stats)):
        stats.emitted += 1
        yield record(target, arch, index, case, label)


# --- The generation loop every target shares ------------------------------------------------------------
ANCHOR_EVERY = 100      # a fresh Z3 anchor for every this many cases (at least 4 anchors in all)
TRIES_PER_CASE = 40     # samples tried per case before asking Z3 for one more anchor


def anchored(next_anchor: Callable, case_of: Callable, label_of: Callable, mutators: Sequence[Callable],
             copy: Callable, count: int, rng: random.Random, stats: Stats, asked: frozenset,
             anchor_every: int = ANCHOR_EVERY, adapt: bool = False) -> Iterator[tuple]:
    """Up to `count` distinct (case, Label): Z3 anchors, and samples between them.

    next_anchor(seed) -> values, or None when the target's Z3 problem has no new shape left;
    case_of(values) -> the case document, or None when the values do not make one;
    label_of(case) -> the spec Label when it breaks exactly the asked rules, else None;
    mutators: functions redrawing one field of a copy(values) in place;
    anchor_every: a fresh anchor for every this many cases (at least 4 in all): a target whose anchors
    cost more than its samples (non-linear constraints: tensormap) asks for fewer;
    adapt: draw the mutators in proportion to how often samples they made were kept so far ((kept + 1) /
    (tried + 2), at least 1/20: each keeps being tried), so that a request whose rules most redraws
    break wastes fewer spec labels. The draw depends only on rng and the labels: same seed, same cases.
    An anchor whose case spec labels otherwise is a model/spec disagreement (stats.disagreements); it
    counts as an anchor, so a run of them ends the loop."""
    anchors, seen, produced = [], set(), 0
    wanted_anchors = max(4, -(-count // anchor_every))
    exhausted = False

    def fresh(case) -> bool:
        # a 128-bit digest, not the text: a streamed campaign of a million cases keeps ~100 MB, not ~0.5 GB
        key = hashlib.blake2b(json.dumps(case, sort_keys=True).encode(), digest_size=16).digest()
        if key in seen:
            return False
        seen.add(key)
        return True

    tried, kept = [0] * len(mutators), [0] * len(mutators)

    def pick(how_many: int) -> list:
        """Indices of how_many distinct mutators: uniformly (rng.sample), or weighted when adapt."""
        if not adapt:
            return rng.sample(range(len(mutators)), how_many)
        pool, out = list(range(len(mutators))), []
        for _ in range(min(how_many, len(pool))):
            weights = [max(0.05, (kept[i] + 1) / (tried[i] + 2)) for i in pool]
            out.append(pool.pop(rng.choices(range(len(pool)), weights=weights)[0]))
        return out

    while produced < count:
        if not exhausted and len(anchors) < wanted_anchors:
            values = next_anchor(rng.randrange(1 << 30))
            if values is None:
                exhausted = True
                continue
            stats.anchors += 1
            case = case_of(values)
            found = None if case is None else label_of(case)
            if found is None:
                wanted_anchors -= 1
                stats.disagreements.append({"case": case, "asked": sorted(asked), "values": values})
                continue
            anchors.append(values)
            if fresh(case):
                produced += 1
                yield case, found
            continue
        if not anchors:
            return
        for _ in range(TRIES_PER_CASE):
            values = copy(rng.choice(anchors))
            chosen = pick(rng.randint(1, 3))
            for i in chosen:
                mutators[i](values)
            case = case_of(values)
            # a case met before is not labelled again: spec's label is a function of the case, so it is
            # dropped either way (a duplicate, or again not exactly the asked rules); what comes out is
            # the same as labelling first, for a fraction of the spec work
            found = None if case is None or not fresh(case) else label_of(case)
            for i in chosen:
                tried[i] += 1
                kept[i] += found is not None
            if found is not None:
                produced += 1
                yield case, found
                break
            stats.rejected += 1
        else:
            if exhausted:
                return          # sampling finds nothing new and Z3 has no shape left: the space is spent
            wanted_anchors += 1


def exactly(label: Callable, arch: str, violate: frozenset) -> Callable:
    """label_of for `anchored`: the target's label(case, arch, expect=violate), None when the case
    breaks other rules or is malformed (SpecError)."""
    def label_of(case):
        try:
            return label(case, arch, expect=violate)
        except SpecError:
            return None
    return label_of
