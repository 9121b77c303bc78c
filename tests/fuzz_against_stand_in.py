"""A stand-in adapter for `layoutproof fuzz --against` (tests/test_fuzz_against_jobs.py): it speaks the line
protocol (solver/fuzz/adapters/protocol.py) and its verdict depends on the record alone, so every executor
and number of its processes must list the same differences. Run as `python tests/fuzz_against_stand_in.py
[MODE] [--pids DIR]`.

Verdicts: null for an index divisible by 5 (not a case it judges), "refuse" for one divisible by 3,
"accept" otherwise; the detail names the index.
Modes, each a way to break the protocol, or to bend it as the protocol allows:
  --blank-lines        a blank line before each answer (the protocol answers on non-blank lines)
  --exit-at-once       exit with status 4 before reading anything, a message on stderr
  --end-after N        end (status 0) after N answers, with a message on stderr
  --not-json           answer each record with a line that is not JSON
  --not-object         answer each record with a JSON list
  --extra-line         a second answer line after the last record's (one answer more than the records)
  --fail-at-end        answer every record, then exit with status 3, a message on stderr
--pids DIR: create DIR/<pid> at start, so that a test counts the adapter processes.
"""
from __future__ import annotations

import json
import os
import sys

from solver.fuzz.adapters import protocol


def verdict(record) -> dict:
    index = record.get("index", 0) if isinstance(record, dict) else 0
    if index % 5 == 0:
        return {"verdict": None, "detail": f"stand-in: not judged ({index})"}
    return {"verdict": "refuse" if index % 3 == 0 else "accept", "detail": f"stand-in: case {index}"}


def main(argv) -> int:
    if "--pids" in argv:
        folder = argv[argv.index("--pids") + 1]
        open(os.path.join(folder, str(os.getpid())), "w").close()
    if "--exit-at-once" in argv:
        print("stand-in: cannot start (asked to)", file=sys.stderr)
        return 4
    limit = int(argv[argv.index("--end-after") + 1]) if "--end-after" in argv else None
    answered = 0
    for line in iter(sys.stdin.readline, ""):
        if not line.strip():
            continue
        if limit is not None and answered == limit:
            print(f"stand-in: stopping after {limit} answers", file=sys.stderr)
            return 0
        if "--not-json" in argv:
            reply = "no verdict here\n"
        elif "--not-object" in argv:
            reply = json.dumps(["accept"]) + "\n"
        else:
            reply = protocol.answer_line(line, verdict)
        sys.stdout.write(("\n" if "--blank-lines" in argv else "") + reply)
        sys.stdout.flush()
        answered += 1
    if "--extra-line" in argv:
        sys.stdout.write(json.dumps({"verdict": "accept", "detail": "stand-in: one answer too many"}) + "\n")
    if "--fail-at-end" in argv:
        print("stand-in: failing at the end (asked to)", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
