"""The audit's verdicts, typed: a Report of KernelAudits of Properties, each proved, refuted (with a
witness) or unknown (with the reason), as docs/CLI.md `audit` writes them in JSON."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

STATUSES = ("proved", "refuted", "unknown")


@dataclass
class Property:
    id: str
    status: str                        # "proved" | "refuted" | "unknown"
    statement: str
    source: str
    witness: Optional[dict] = None     # refuted: where, and what was read instead
    reason: Optional[str] = None       # unknown: why it is not decided; proved: what was checked
    checked: int = 0                   # how many instances (MMA visits, phases, loads) were decided

    def document(self) -> dict:
        return {"id": self.id, "status": self.status, "witness": self.witness, "reason": self.reason,
                "checked": self.checked, "source": self.source}


@dataclass
class KernelAudit:
    kernel: str
    properties: list                   # Property, in catalogue order
    launch: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return all(p.status == "proved" for p in self.properties)

    def document(self) -> dict:
        return {"kernel": self.kernel, "ok": self.ok, "launch": self.launch,
                "properties": [p.document() for p in self.properties]}


@dataclass
class Report:
    kernels: list                      # KernelAudit
    assumptions: list                  # {"id", "statement", "evidence"}

    @property
    def ok(self) -> bool:
        return bool(self.kernels) and all(k.ok for k in self.kernels)

    def document(self) -> dict:
        return {"ok": self.ok, "kernels": [k.document() for k in self.kernels], "assumptions": self.assumptions}

    def explain(self) -> str:
        """A few lines per kernel: each property that is not proved, with its witness or reason."""
        if not self.kernels:
            return "no kernel audited"
        lines = []
        for kernel in self.kernels:
            counts = {s: sum(p.status == s for p in kernel.properties) for s in STATUSES}
            lines.append(f"{kernel.kernel}: {'ok' if kernel.ok else 'NOT ok'} ({counts['proved']} proved, "
                         f"{counts['refuted']} refuted, {counts['unknown']} unknown)")
            for p in kernel.properties:
                if p.status == "refuted":
                    lines.append(f"  refuted {p.id}: {witness_text(p.witness)}")
                elif p.status == "unknown":
                    lines.append(f"  unknown {p.id}: {p.reason}")
        return "\n".join(lines)


def witness_text(witness: Optional[dict]) -> str:
    if not witness:
        return ""
    what = witness.get("what", "")
    rest = ", ".join(f"{k} {v}" for k, v in witness.items() if k != "what")
    return f"{what} ({rest})" if rest else what
