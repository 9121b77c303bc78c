"""The rule catalogue: every rule of the model as data (id, source, statement) plus its check.

A *constraint* rule has a check: a function of one subject (a decoded descriptor, an operand request,
a swizzle, ...) that returns None when the subject obeys the rule and a one-line message when it does
not. A *definition* rule states how something is computed (a bit position, a formula); it has no
check, and its tests are the manual's worked examples and the independent oracles.

Every rule records where it comes from (`source`, a manual section or document) and what decided it
(`evidence`): the manual's text, a hardware observation, the CUDA driver, ptxas, CUTLASS, or an
interpretation of ambiguous text that hardware can later confirm or overturn.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional

EVIDENCE_KINDS = ("manual", "hardware", "driver", "ptxas", "cutlass", "interpretation")


@dataclass
class Rule:
    id: str
    source: str
    statement: str
    subject: str = "definition"  # what its check looks at; "definition" rules have no check
    evidence: str = "manual"
    note: str = ""
    check: Optional[Callable[[Any], Optional[str]]] = field(default=None, repr=False, compare=False)

    def checker(self, function: Callable[[Any], Optional[str]]):
        """Decorator: attach `function` as this rule's check."""
        if self.check is not None:
            raise ValueError(f"rule {self.id} already has a check")
        self.check = function
        return function

    def violation(self, message: str) -> "Violation":
        return Violation(self, message)

    def as_json(self) -> dict:
        document = {"id": self.id, "source": self.source, "statement": self.statement,
                    "subject": self.subject, "evidence": self.evidence}
        if self.note:
            document["note"] = self.note
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


def rule(id: str, source: str, statement: str, *, subject: str = "definition",
         evidence: str = "manual", note: str = "") -> Rule:
    """Create and register a rule. Ids are unique across the whole catalogue."""
    if id in CATALOGUE:
        raise ValueError(f"duplicate rule id {id}")
    if evidence not in EVIDENCE_KINDS:
        raise ValueError(f"rule {id}: unknown evidence kind {evidence!r}")
    created = Rule(id, source, statement, subject, evidence, note)
    CATALOGUE[id] = created
    return created


def rules_for(subject: str) -> list[Rule]:
    return [r for r in CATALOGUE.values() if r.subject == subject]


def check_all(subject: str, value: Any, only: Optional[Iterable[str]] = None) -> list[Violation]:
    """Run every constraint rule about `subject` on `value`, in catalogue order."""
    wanted = None if only is None else set(only)
    found = []
    for r in rules_for(subject):
        if r.check is None or (wanted is not None and r.id not in wanted):
            continue
        message = r.check(value)
        if message:
            found.append(Violation(r, message))
    return found


def all_rules() -> list[Rule]:
    """The whole catalogue, after importing every spec module that defines rules."""
    from spec import catalogue  # noqa: F401  (imports every topic module)
    return list(CATALOGUE.values())


class SpecError(ValueError):
    """Malformed input: names the field, the value and the rule. The CLI turns it into exit 2."""

    def __init__(self, field_name: str, value: Any, problem: str, rule_id: str = ""):
        self.field_name = field_name
        self.value = value
        self.problem = problem
        self.rule_id = rule_id
        where = f" ({rule_id})" if rule_id else ""
        super().__init__(f"{field_name}={value!r}: {problem}{where}")


def parse_number(text: str) -> int:
    """A number as users write them: decimal or 0x-hex, '_' separators allowed. ValueError if not."""
    cleaned = text.strip().lower().replace("_", "")
    return int(cleaned, 16) if cleaned.startswith("0x") else int(cleaned, 10)
