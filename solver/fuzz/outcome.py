"""What a fuzz case leads to, for every target: the outcomes worst first, the Label (rules broken,
outcome, witness), and the steps the targets label with.

A case is "refused" when a tool refuses it (the driver's encoder, CUDA_ERROR_INVALID_VALUE; ptxas, an
ill-formed instruction form or a kernel mixing .cta_group::1 and ::2), "trap" when a copy traps at run
time, "hang" when the kernel never finishes (a tcgen05.alloc waiting for columns that nothing will free),
"wrong-data" when some element lands or is read elsewhere than expected (the witness names it),
"undefined" when the manual calls what the case does undefined behaviour and no tool refuses it (a
tcgen05 access outside its warp's lane quarter), "unknown" when a rule is broken but neither the manual
nor our evidence says what happens (a fuzz label never guesses), and "ok" when nothing goes wrong.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable, Iterable, Optional, Sequence

from spec.rule import CATALOGUE, OUTCOMES  # noqa: F401  (OUTCOMES: worst first, re-exported)

WitnessFinder = Callable[[], Optional[dict]]

# What breaking a rule leads to is the rule's own record (spec.rule.Rule.outcome_on: "refused" where its
# enforcer refuses it on the arch, else its recorded consequence, else "unknown"); the targets ask it here.


@functools.lru_cache(maxsize=None)
def catalogue_order() -> dict:
    """{rule id: its place in the catalogue} (spec.rules.all_rules, the whole catalogue once it is loaded),
    the order labels list rules in."""
    from spec.rules import all_rules
    return {r.id: i for i, r in enumerate(all_rules())}


def rule_outcome(rule_id: str, arch: str) -> tuple:
    """(outcome, why) of breaking the rule `rule_id` on `arch`, from its record."""
    return CATALOGUE[rule_id].outcome_on(arch)


def refused_ids(rule_ids: Iterable[str], arch: str, enforcer: str) -> list:
    """The rules of `rule_ids` that `enforcer` ("driver", "ptxas") refuses on `arch`, in the order given."""
    return [i for i in rule_ids if CATALOGUE[i].enforced_by == enforcer and CATALOGUE[i].refused_on(arch)]


def outcome_ids(rule_ids: Iterable[str], arch: str, outcome: str) -> list:
    """The rules of `rule_ids` whose breaking leads to `outcome` on `arch` (a trap, a hang, ...)."""
    return [i for i in rule_ids if rule_outcome(i, arch)[0] == outcome]


@dataclass(frozen=True)
class Label:
    violates: tuple          # rule ids, catalogue order
    outcome: str
    witness: Optional[dict]


def worst(outcomes: Iterable[str]) -> str:
    """The outcome of a case from the outcomes of the rules it breaks ("ok" when it breaks none)."""
    present = set(outcomes) or {"ok"}
    return next(o for o in OUTCOMES if o in present)


def blamed(broken: Sequence, rule_ids, **who) -> Optional[dict]:
    """The witness {**who, "because": [each broken rule among rule_ids]}, or None when none of them is
    broken. `broken`: spec violations (each with .rule.id), in catalogue order."""
    because = [str(v) for v in broken if v.rule.id in rule_ids]
    return {**who, "because": because} if because else None


def mma_instruction(arch: str) -> str:
    return "wgmma.mma_async (sm_90a)" if arch == "sm90" else "tcgen05.mma (sm_103a)"


def ptxas_refusal(broken: Sequence, arch: str) -> Optional[dict]:
    """The witness of ptxas refusing the MMA instruction form on `arch` (the operand rules ptxas enforces
    there: sm90's wgmma takes the type, transposition, K and N in its form, PTX 9.7.15.5; sm103's tcgen05.mma
    has no kind::i8), or None."""
    return blamed(broken, refused_ids([v.rule.id for v in broken], arch, "ptxas"), by="ptxas",
                  instruction=mma_instruction(arch))


def broken_ids(broken: Sequence, expect=None) -> Optional[tuple]:
    """The ids of the broken rules (spec violations, catalogue order); None when `expect` (a set of rule
    ids) is given and they differ from it."""
    ids = tuple(v.rule.id for v in broken)
    return None if expect is not None and set(ids) != expect else ids


def first_found(broken: Sequence, expect, steps: Sequence[tuple[str, WitnessFinder]],
                unknown_note: str) -> Optional[Label]:
    """The Label of a case that breaks `broken` (spec violations): steps are (outcome, witness finder),
    worst first; the first finder that returns a witness gives the outcome. None found: "unknown" (with
    the note saying what was looked for) when a rule is broken, else "ok". None, and no witness looked
    for, when `expect` is given and the broken rules differ from it (broken_ids)."""
    violates = broken_ids(broken, expect)
    if violates is None:
        return None
    for outcome, find in steps:
        witness = find()
        if witness:
            return Label(violates, outcome, witness)
    if violates:
        return Label(violates, "unknown", {"note": unknown_note})
    return Label(violates, "ok", None)

