"""The rule catalogue: every rule of the executable specification, and the ids it used to have.

Importing this module imports every topic module of spec/, so the catalogue is complete; the record
itself (Rule, rule(), check_all, SpecError) lives in spec/rule.py, which the topic modules import.
An id that was merged into another rule resolves to its successor (spec/rule_aliases.json, listed in
CHANGES.md), so scripts written against an older catalogue keep working.
"""
from __future__ import annotations

import json
import os

from spec.cases import desc_case, recipe_case  # noqa: F401  (each import registers its rules)
from spec.cute import layout, notation, swizzle  # noqa: F401
from spec.mma import canonical, descriptor, dtypes, instr_desc, readmap, shape  # noqa: F401
from spec.rule import (CATALOGUE, CHAPTER_ORDER, DEFINITION, ENFORCERS, EVIDENCE_KINDS, Rule,  # noqa: F401
                       SpecError, Violation, catalogue_position, check_all, parse_number, rule, rules_for)
from spec.scales import layouts, path, tmem as scales_tmem, vectors  # noqa: F401
from spec.tma import driver, im2col, place, tensormap, tensormap_params  # noqa: F401
from spec.tma import swizzle as tma_swizzle  # noqa: F401
from spec.tmem import accumulator, address, alloc, cp, instruction, ld_st, shift  # noqa: F401

_ALIASES_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rule_aliases.json")


def all_rules() -> list[Rule]:
    """The whole catalogue, in a fixed order: by chapter, then by file and line of definition."""
    return sorted(CATALOGUE.values(), key=catalogue_position)


def aliases() -> dict[str, str]:
    """Retired rule id -> the id of the rule it was merged into."""
    with open(_ALIASES_FILE) as handle:
        return json.load(handle)["aliases"]


def resolve(rule_id: str) -> Rule:
    """The rule with this id, or the rule a retired id was merged into. KeyError if neither."""
    if rule_id in CATALOGUE:
        return CATALOGUE[rule_id]
    successor = aliases().get(rule_id)
    if successor is None:
        raise KeyError(rule_id)
    return CATALOGUE[successor]
