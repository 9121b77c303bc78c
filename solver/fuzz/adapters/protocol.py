"""The `fuzz --against` line protocol every adapter speaks (solver/fuzz/adapters/driver_encode.py's
docstring states it): one JSON record per input line, one JSON answer per non-blank line, in order,
flushed as it is written; a line that is not JSON gets {"verdict": null, "detail": "not JSON: ..."}.
An adapter answers each line before it reads the next: the runner sends one record and waits for its
answer (`serve` does so), keeping each adapter process for many cases and running several side by side.
The runner holds it to one answer line per record, in turn, within a deadline (fuzz --answer-timeout) and
MAX_ANSWER_BYTES (solver/fuzz/compiler_campaign.py `Child`).
The client's side: `difference`, what `layoutproof fuzz --against` lists for an answer (the runner that
asks the adapters is solver/fuzz/compiler_campaign.py)."""
from __future__ import annotations

import json
from typing import Callable, Iterable, Optional

Answer = Callable[[object], dict]      # a decoded record -> {"verdict", "detail", ...}


def one_line(text) -> str:
    return " ".join(str(text).split())


def answer_line(line: str, answer: Answer) -> str:
    """The answer to one input line, as one JSON line (with its newline)."""
    try:
        record = json.loads(line)
    except json.JSONDecodeError as error:
        reply = {"verdict": None, "detail": one_line(f"not JSON: {error}")}
    else:
        reply = answer(record)
    return json.dumps(reply) + "\n"


def serve(lines: Iterable[str], write: Callable[[str], object], answer: Answer,
          flush: Optional[Callable[[], object]] = None) -> int:
    """Answer every non-blank line of `lines` through `write` (then `flush`); returns how many."""
    answered = 0
    for line in lines:
        if not line.strip():
            continue
        write(answer_line(line, answer))
        if flush is not None:
            flush()
        answered += 1
    return answered


# --- The client's side ------------------------------------------------------------------------------------
class ProtocolError(ValueError):
    """An answer that is no {"verdict", "detail"} object: the adapter breaks the protocol."""


def our_verdict(record: dict) -> str:
    """What a tool does with a fuzz record by its label: "refuse" when spec says it is refused, else
    "accept" (a trap, a hang, wrong data and undefined behaviour all pass the tool)."""
    return "refuse" if record["outcome"] == "refused" else "accept"


def difference(record: dict, answer) -> Optional[dict]:
    """The entry `fuzz --against` lists for a record whose adapter verdict differs from ours, with the
    adapter's detail; None when they agree or the adapter gives none (null: not a case it judges)."""
    if not isinstance(answer, dict):
        raise ProtocolError(f"the --against adapter answered {one_line(json.dumps(answer))[:80]!r}, not a "
                            "JSON object {\"verdict\", \"detail\"}")
    theirs, ours = answer.get("verdict"), our_verdict(record)
    if theirs is None or theirs == ours:
        return None
    return {"index": record["index"], "ours": ours, "theirs": theirs, "detail": answer.get("detail"),
            "violates": record["violates"], "outcome": record["outcome"], "case": record["case"]}
