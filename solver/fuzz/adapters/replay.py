"""A recorded compiler: answers the `fuzz --against` line protocol (solver/fuzz/adapters/protocol.py) from
a campaign recording, so that a campaign runs end to end (its adapter processes, chunks, cache, merge; on a
Dask cluster too) where the compiler is not installed, as in CI:

    python -m solver.fuzz.adapters.replay tests/hardware/triton_gluon_campaign.jsonl.gz
    python -m solver.fuzz.adapters.replay tests/hardware/cute_dsl_campaign.json.gz

The recordings: a Triton one (.jsonl.gz: a header line, then {case, answer, ...} per case) or a CuTe DSL
one (.json.gz: {"records": {arch: [{case, answer}]}}). A record's case is looked up by its canonical JSON;
a case the recording lacks gets {"verdict": null, "detail": "not in the recording"}. A recorded crash
(an answer with "crash": true, where the compiler ended the process) is played again: the diagnostic goes to
the log the campaign reads (LAYOUTPROOF_TRITON_STDERR, else stderr), then the process aborts.
"""
from __future__ import annotations

import gzip
import json
import zlib
import os
import sys

from solver.fuzz.adapters import protocol
from solver.fuzz.compiler_campaign import case_key

NOT_RECORDED = "not in the recording"


def load(path: str) -> dict:
    """canonical case JSON -> the recorded answer."""
    with gzip.open(path, "rt") as handle:
        first = handle.readline()
        rest = handle.read()
    if path.endswith(".jsonl.gz"):
        rows = [json.loads(line) for line in rest.splitlines() if line.strip()]
    else:
        rows = [r for records in json.loads(first + rest)["records"].values() for r in records]
    return {case_key(r["case"]): {k: v for k, v in r["answer"].items() if k != "seconds"} for r in rows}


def answer(record, answers: dict) -> dict:
    case = record.get("case") if isinstance(record, dict) else None
    found = answers.get(case_key(case)) if isinstance(case, dict) else None
    if found is None:
        return {"verdict": None, "detail": NOT_RECORDED}
    if found.get("crash"):
        why = str(found.get("detail", "")).split("): ", 1)[-1]
        log = os.environ.get("LAYOUTPROOF_TRITON_STDERR")
        with (open(log, "w") if log else os.fdopen(os.dup(2), "w")) as handle:
            handle.write(why + "\n")
        os.abort()
    return found


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m solver.fuzz.adapters.replay RECORDING(.jsonl.gz | .json.gz)", file=sys.stderr)
        return 2
    try:
        answers = load(argv[0])
    except (OSError, EOFError, ValueError, KeyError, TypeError, AttributeError, RecursionError, zlib.error) as error:
        print(f"replay: {argv[0]!r:.80}: not a recording ({' '.join(str(error).split())[:120]})", file=sys.stderr)
        return 2

    def write(text: str) -> None:
        sys.stdout.write(text)
        sys.stdout.flush()

    protocol.serve(iter(sys.stdin.readline, ""), write, lambda record: answer(record, answers))
    return 0


if __name__ == "__main__":
    sys.exit(main())
