"""What a rule is: id, source, statement, check(s), who enforces it and what decided it, in one record.

A *constraint* rule has a check per subject it applies to: a function of one subject (a decoded
descriptor, an operand request, a tensor map, a TMA box, ...) that returns None when the subject obeys
the rule and a one-line message when it does not. A rule that constrains several subjects (the same
limit on a tensor map's box and on a box placed by `tma place`) is one rule with one check per subject,
not one rule per subject. A *definition* rule states how something is computed (a bit position, a
formula); it has no check, and its tests are the manual's worked examples and the independent oracles.

Every rule records:
  * `source`: a primary document a user can open: a PTX ISA section or table, a CUDA driver API page,
    or one of our evidence files under tests/hardware/;
  * `evidence`: what decided it: the manual's text, a hardware observation, the CUDA driver, ptxas,
    CUTLASS, or an interpretation of ambiguous text that hardware can later confirm or overturn;
  * `enforced_by`: who refuses an input that breaks it: the driver's encoder, ptxas, or nobody (it
    shows at run time as a trap or as wrong data, or not at all); `not_enforced_on` names the
    architectures whose observed driver accepts such input all the same (spec/tma/driver.py);
  * `defined_in`: the file and line where the rule is created (for `layoutproof rules --where`);
  * `consequences`: what breaking it leads to where no tool refuses it, per architecture, with what says
    so (a trap the H100 showed, a hang the manual implies, "undefined" where the manual says so). Where
    its enforcer refuses it, the outcome is "refused"; where nothing is recorded, "unknown": a fuzz label
    never guesses. `Rule.outcome_on(arch)` is the one place a fuzz target asks.

This module only defines the record and the registry; spec/rules.py is the whole catalogue.
"""
from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional

EVIDENCE_KINDS = ("manual", "hardware", "driver", "ptxas", "cutlass", "interpretation")
ENFORCERS = ("driver", "ptxas", "nobody")
DEFINITION = "definition"
# What breaking a rule leads to, worst first: refused by a tool (the driver's encoder, ptxas), a trap at run
# time, a hang, wrong data (an element lands or is read elsewhere), undefined (the manual's words), unknown
# (neither the manual nor our evidence says), ok (the input is ignored where it breaks the rule).
OUTCOMES = ("refused", "trap", "hang", "wrong-data", "undefined", "unknown", "ok")
ARCHITECTURES = ("sm90", "sm100", "sm103")


@dataclass(frozen=True)
class Consequence:
    """What breaking a rule leads to where no tool refuses it: `outcome` (one of OUTCOMES but "refused"),
    `why` (the evidence, one line), on `arches` (() for every architecture)."""
    outcome: str
    why: str
    arches: tuple = ()

    def __post_init__(self):
        if self.outcome not in OUTCOMES or self.outcome == "refused":
            raise ValueError(f"consequence {self.outcome!r}: one of {OUTCOMES[1:]} (refusal is the enforcer's)")
        if any(arch not in ARCHITECTURES for arch in self.arches):
            raise ValueError(f"consequence on {self.arches}: architectures are {ARCHITECTURES}")

_REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

Check = Callable[[Any], Optional[str]]


@dataclass
class Rule:
    id: str
    source: str
    statement: str
    subjects: tuple = ()               # what its checks look at; () for a definition
    evidence: str = "manual"
    note: str = ""
    enforced_by: str = ""              # "driver", "ptxas", "nobody"; "" for a definition
    not_enforced_on: tuple = ()        # architectures whose observed enforcer accepts it all the same
    defined_in: str = ""               # "<path>.py:<line>" relative to the repository root
    consequences: tuple = ()           # Consequence records: what breaking it leads to where none refuses it
    checks: dict = field(default_factory=dict, repr=False, compare=False)

    def refused_on(self, arch: str) -> bool:
        """Does its enforcer (the driver's encoder, ptxas) refuse an input that breaks it, on `arch`?"""
        return self.enforced_by in ("driver", "ptxas") and arch not in self.not_enforced_on

    def outcome_on(self, arch: str) -> tuple:
        """(outcome, why) of breaking this rule alone on `arch` (OUTCOMES): "refused" by its enforcer, else
        its recorded consequence there, else "unknown"."""
        if self.refused_on(arch):
            return "refused", f"{self.enforced_by} refuses it"
        for consequence in self.consequences:
            if not consequence.arches or arch in consequence.arches:
                return consequence.outcome, consequence.why
        return "unknown", "nothing recorded says what breaking it does"

    @property
    def subject(self) -> str:
        """The first subject (the one the rule is listed under), or "definition"."""
        return self.subjects[0] if self.subjects else DEFINITION

    def is_about(self, subject: str) -> bool:
        """Is `subject` one of the rule's subjects ("definition" for a definition)?"""
        return subject in (self.subjects or (DEFINITION,))

    @property
    def check(self) -> Optional[Check]:
        """The check of the first subject (None for a definition, or before it is attached)."""
        return self.checks.get(self.subject)

    def checker(self, function: Optional[Check] = None, *, subject: Optional[str] = None):
        """Decorator: attach `function` as this rule's check of `subject` (default: its only subject)."""
        def attach(check: Check) -> Check:
            target = subject
            if target is None:
                if len(self.subjects) != 1:
                    raise ValueError(f"rule {self.id}: name the subject of this check ({self.subjects})")
                target = self.subjects[0]
            if target not in self.subjects:
                raise ValueError(f"rule {self.id}: {target!r} is not one of its subjects {self.subjects}")
            if target in self.checks:
                raise ValueError(f"rule {self.id} already has a check of {target}")
            self.checks[target] = check
            return check
        return attach(function) if function is not None else attach

    def violation(self, message: str) -> "Violation":
        return Violation(self, message)

    def as_json(self) -> dict:
        document = {"id": self.id, "source": self.source, "statement": self.statement,
                    "subject": self.subject, "subjects": list(self.subjects), "evidence": self.evidence,
                    "enforced_by": self.enforced_by or None, "defined_in": self.defined_in}
        if self.not_enforced_on:
            document["not_enforced_on"] = list(self.not_enforced_on)
        if self.note:
            document["note"] = self.note
        if self.subjects:
            document["if_broken"] = {arch: dict(zip(("outcome", "why"), self.outcome_on(arch)))
                                     for arch in ARCHITECTURES}
        return document


@dataclass(frozen=True)
class Violation:
    rule: Rule
    message: str

    def as_json(self) -> dict:
        return {"rule": self.rule.id, "source": self.rule.source, "message": self.message}

    def __str__(self) -> str:
        return f"{self.rule.id}: {self.message} [{self.rule.source}]"


CATALOGUE: dict[str, Rule] = {}


def _caller_location(depth: int) -> str:
    frame = sys._getframe(depth + 1)
    path = os.path.relpath(os.path.abspath(frame.f_code.co_filename), _REPOSITORY)
    return f"{path.replace(os.sep, '/')}:{frame.f_lineno}"


def rule(id: str, source: str, statement: str, *, subject: Optional[str] = None, subjects: Iterable[str] = (),
         evidence: str = "manual", note: str = "", enforced_by: str = "", not_enforced_on: Iterable[str] = (),
         consequences: Iterable[Consequence] = (), stack_depth: int = 1) -> Rule:
    """Create and register a rule. Ids are unique across the whole catalogue.

    `subject` (one) or `subjects` (several) name what its checks look at; neither makes a definition.
    A constraint names who enforces it (`enforced_by`); it defaults to "nobody". `stack_depth` says
    which caller's line is `defined_in` (1: the caller of rule(); 2 when called through a helper).
    `not_enforced_on` lists the architectures on which the enforcer was seen to accept a breach."""
    if id in CATALOGUE:
        raise ValueError(f"duplicate rule id {id}")
    if evidence not in EVIDENCE_KINDS:
        raise ValueError(f"rule {id}: unknown evidence kind {evidence!r}")
    named = tuple(subjects) + ((subject,) if subject and subject != DEFINITION else ())
    if enforced_by and enforced_by not in ENFORCERS:
        raise ValueError(f"rule {id}: unknown enforcer {enforced_by!r}")
    if named and not enforced_by:
        enforced_by = "nobody"
    if not named and enforced_by:
        raise ValueError(f"rule {id}: a definition is not enforced by anyone")
    not_enforced_on = tuple(not_enforced_on)
    if not_enforced_on and enforced_by in ("", "nobody"):
        raise ValueError(f"rule {id}: not_enforced_on needs an enforcer")
    consequences = tuple(consequences)
    if consequences and not named:
        raise ValueError(f"rule {id}: a definition cannot be broken, so it has no consequences")
    created = Rule(id, source, statement, named, evidence, note, enforced_by, not_enforced_on,
                   _caller_location(stack_depth), consequences)
    CATALOGUE[id] = created
    return created


# The catalogue's order, whatever order the topic modules happened to be imported in: by chapter as the
# pipeline runs (layouts and swizzles, the MMA operand, tensor memory, TMA, the cases that join them), then
# by file and line of definition.
CHAPTER_ORDER = ("spec/cute/", "spec/mma/", "spec/tmem/", "spec/scales/", "spec/tma/", "spec/cases/")


def catalogue_position(r: Rule) -> tuple:
    path, _, line = r.defined_in.rpartition(":")
    chapter = next((i for i, prefix in enumerate(CHAPTER_ORDER) if path.startswith(prefix)), len(CHAPTER_ORDER))
    return chapter, path, int(line or 0)


# Where the rules about each subject are defined. Rules register themselves when their module is imported,
# so a query must first import every module that defines rules about its subject: otherwise a caller that
# imported only this module (or only some topic modules) would get "no violations" for a broken input.
# tests/spec_tests/test_catalogue_loading.py checks this table against the whole catalogue (every rule's module is
# listed under each of its subjects) and queries each subject in a fresh process. "definition" rules live
# everywhere: asking for them loads the whole catalogue (spec/rules.py).
SUBJECT_MODULES: dict[str, tuple] = {
    "swizzle": ("spec.cute.swizzle",),
    "descriptor": ("spec.mma.descriptor",),
    "instr_desc": ("spec.mma.instr_desc",),
    "mma_shape": ("spec.mma.shape",),
    "operand": ("spec.mma.readmap",),
    "tmem_address": ("spec.tmem.address",),
    "tmem_access": ("spec.tmem.address", "spec.tmem.ld_st"),
    "tmem_alloc_sequence": ("spec.tmem.alloc",),
    "tmem_instruction": ("spec.tmem.address", "spec.tmem.alloc", "spec.tmem.cp", "spec.tmem.instruction",
                         "spec.tmem.shift"),
    "scale_config": ("spec.scales.vectors",),
    "scale_path": ("spec.scales.path",),
    "tensormap": ("spec.tma.tensormap",),
    "tma_box": ("spec.tma.tensormap",),
    "tma_swizzle_use": ("spec.tma.swizzle",),
    "im2col_load": ("spec.tma.im2col", "spec.tma.tensormap"),
    "desc_case": ("spec.cases.desc_case",),
    "recipe": ("spec.cases.recipe_case", "spec.tma.tensormap"),
    "recipe_case": ("spec.cases.recipe_case",),
    DEFINITION: ("spec.rules",),
}

_LOADED_SUBJECTS: set = set()


def load_rules_about(subject: str) -> None:
    """Import every module that defines rules about `subject` (once), so that the registry holds them all.
    SpecError for a subject no rule is about: a misspelt subject must not read as "no violations"."""
    if subject in _LOADED_SUBJECTS:
        return
    modules = SUBJECT_MODULES.get(subject)
    if modules is None:
        raise SpecError("subject", subject, "no rule is about this subject; the subjects: "
                        + ", ".join(sorted(SUBJECT_MODULES)))
    import importlib    # the topic modules import this one: they are loaded on first query, not here
    for name in modules:
        importlib.import_module(name)
    _LOADED_SUBJECTS.add(subject)


_RULES_FOR: dict = {}      # (subject, catalogue size) -> the sorted rules; rules are only ever added


def rules_for(subject: str) -> list[Rule]:
    """The rules about `subject`, in catalogue order (the order spec.rules.all_rules gives). Loads the
    modules that define them first (SUBJECT_MODULES); SpecError for an unknown subject."""
    return list(_sorted_rules(subject))


def _sorted_rules(subject: str) -> list[Rule]:
    """rules_for(subject), the cached list itself (not to be changed)."""
    load_rules_about(subject)
    key = (subject, len(CATALOGUE))
    cached = _RULES_FOR.get(key)
    if cached is None:
        if subject == DEFINITION:
            found = [r for r in CATALOGUE.values() if not r.subjects]
        else:
            found = [r for r in CATALOGUE.values() if subject in r.subjects]
        cached = _RULES_FOR[key] = sorted(found, key=catalogue_position)
    return cached


def check_all(subject: str, value: Any, only: Optional[Iterable[str]] = None) -> list[Violation]:
    """Run every constraint rule about `subject` on `value`, in catalogue order."""
    wanted = None if only is None else set(only)
    found = []
    for r in _sorted_rules(subject):
        check = r.checks.get(subject)
        if check is None or (wanted is not None and r.id not in wanted):
            continue
        message = check(value)
        if message:
            found.append(Violation(r, message))
    return found


SHOWN_CHARACTERS = 80
MESSAGE_CHARACTERS = 220     # the most of one error message spent on a problem's text


def one_line(text: Any, limit: Optional[int] = None) -> str:
    """`text` as one line: line breaks (and other control characters) escaped; cut in the middle when
    longer than `limit`, keeping its start (the field) and its end (the rule)."""
    text = str(text)
    if any(c < " " or c == "\x7f" for c in text):
        text = "".join(c if c >= " " and c != "\x7f" else c.encode("unicode_escape").decode("ascii")
                       for c in text)
    if limit is not None and len(text) > limit:
        keep = limit - 40
        text = f"{text[:keep * 2 // 3]}... ({len(text)} characters) ...{text[len(text) - keep // 3:]}"
    return text


def shown(value: Any) -> str:
    """A value as an error message quotes it: its repr, cut when long (a long text shows its start and
    its length; an integer too long to print shows its number of bits)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 256:
        return f"<an integer of {value.bit_length()} bits>"
    if isinstance(value, str) and len(value) > SHOWN_CHARACTERS:
        return f"{value[:SHOWN_CHARACTERS // 2]!r}... ({len(value)} characters)"
    try:
        text = repr(value)
    except ValueError:                 # an integer inside a container, too long to print
        return f"<a {type(value).__name__} holding a huge integer>"
    text = one_line(text)
    return text if len(text) <= SHOWN_CHARACTERS else f"{text[:SHOWN_CHARACTERS // 2]}... ({len(text)} characters)"


class SpecError(ValueError):
    """Malformed input: names the field, the value and the rule. The CLI turns it into exit 2."""

    def __init__(self, field_name: str, value: Any, problem: str, rule_id: str = ""):
        self.field_name = field_name
        self.value = value
        self.problem = problem
        self.rule_id = rule_id
        where = f" ({rule_id})" if rule_id else ""
        super().__init__(f"{one_line(field_name, 60)}={shown(value)}: {one_line(problem, MESSAGE_CHARACTERS)}"
                         f"{where}")

    def __reduce__(self):
        # (pickled as its four fields, not its message: a forked worker of `--jobs` sends it back whole)
        return type(self), (self.field_name, self.value, self.problem, self.rule_id)


# The longest number any field takes: 64-bit descriptors and addresses need 20 decimal digits; a number
# written with more than this many characters is refused before it is converted (Python's int() is
# quadratic in the digits, and refuses more than 4300 of them).
NUMBER_CHARACTERS = 100
_NUMBER = re.compile(r"[+-]?(?:0x[0-9a-f]+|[0-9]+)")


def word_ambiguity(text: str, bits: int) -> Optional[str]:
    """Why `text`, a `bits`-bit word (a descriptor) written without a prefix, cannot be read; None when it
    can, or when it is no bare number at all (its parser says what is wrong then).

    Words are printed in hex; pasted without its 0x, 4000004000010040 would read as a decimal number and
    decode to another descriptor (issue 25, item 3). So a bare string of decimal digits is refused when
    its hex reading is another word of the same width; it is read as decimal only where that is the one
    reading: a single digit (the same value both ways) or a string whose hex reading does not fit `bits`
    bits (17 or more significant digits for 64 bits), which cannot be the hex word. Hex digits without
    the 0x (12ab) get the same hint."""
    if not isinstance(text, str):
        return None
    digits = text.strip().replace("_", "").lstrip("+")
    if not digits or len(digits) > NUMBER_CHARACTERS or not digits.isascii():
        return None
    hexadecimal = all(c in "0123456789abcdefABCDEF" for c in digits)
    if hexadecimal and not digits.isdigit():               # 12ab: hex without its 0x
        return f"a {bits}-bit word in hex needs its 0x prefix: write 0x{digits}"
    if not digits.isdigit():
        return None
    as_hex, as_decimal = int(digits, 16), int(digits, 10)
    if as_hex == as_decimal or as_hex >> bits:
        return None
    width = bits // 4
    return (f"a {bits}-bit word needs its 0x: read as hex it is 0x{as_hex:0{width}x}, as decimal "
            f"0x{as_decimal:0{width}x}; write 0x for hex")


def parse_number(text: str) -> int:
    """A number as users write them: decimal or 0x-hex, '_' separators allowed, ASCII digits only
    ('١٦' and '１６' are not numbers). ValueError if not, or if longer than NUMBER_CHARACTERS."""
    if not isinstance(text, str):
        raise ValueError("not a number")
    cleaned = text.strip().lower().replace("_", "")
    if len(cleaned) > NUMBER_CHARACTERS:
        raise ValueError(f"a number of {len(cleaned)} characters: too large for any field")
    if not cleaned.isascii() or not _NUMBER.fullmatch(cleaned):
        raise ValueError("not a decimal or 0x-hex number")
    sign = -1 if cleaned.startswith("-") else 1
    cleaned = cleaned.lstrip("+-")
    return sign * (int(cleaned, 16) if cleaned.startswith("0x") else int(cleaned, 10))
