"""The `fuzz --against` line protocol every adapter speaks (solver/fuzz/adapters/driver_encode.py's
docstring states it): one JSON record per input line, one JSON answer per non-blank line, in order,
flushed as it is written; a line that is not JSON gets {"verdict": null, "detail": "not JSON: ..."}."""
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
