"""A property's definition (id, statement, source) and the tally of its instances over one run: proved
when every instance was checked and none failed, refuted with the first witness, unknown with the first
reason (solver/kernel/audit/properties.py, epilogue.py)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from solver.kernel.audit.report import Property

VACUOUS = "the kernel has no"   # how a property true for want of any instance begins its reason (from the text)


@dataclass(frozen=True)
class Definition:
    id: str
    statement: str
    source: str


class Tally:
    """The instances of one property: the first refutation, the first reason one is unknown, and how many
    were checked."""

    def __init__(self, definition: Definition):
        self.definition = definition
        self.witness: Optional[dict] = None
        self.reason: Optional[str] = None
        self.checked = 0
        self.details: list = []            # what a proof found, said after the count (the layout it read)

    def proved(self) -> None:
        self.checked += 1

    def refuted(self, witness: dict) -> None:
        self.checked += 1
        if self.witness is None:
            self.witness = witness

    def unknown(self, reason: str) -> None:
        if self.reason is None:
            self.reason = reason

    def result(self, nothing: str) -> Property:
        d = self.definition
        if self.witness is not None:
            return Property(d.id, "refuted", d.statement, d.source, witness=self.witness, checked=self.checked)
        if self.reason is not None:
            return Property(d.id, "unknown", d.statement, d.source, reason=self.reason, checked=self.checked)
        if self.checked == 0:
            return Property(d.id, "unknown", d.statement, d.source, reason=nothing)
        said = "".join(f"; {detail}" for detail in self.details)
        return Property(d.id, "proved", d.statement, d.source, reason=f"{self.checked} checked{said}",
                        checked=self.checked)


def first_time(seen: set, key, limit: int, tally: Tally, what: str) -> Optional[bool]:
    """True the first time `key` comes (it is added to `seen`), False after; None once `limit` distinct keys
    were checked (the tally is then unknown: more than `limit` distinct `what`)."""
    if key in seen:
        return False
    if len(seen) >= limit:
        tally.unknown(f"more than {limit} distinct {what}")
        return None
    seen.add(key)
    return True
