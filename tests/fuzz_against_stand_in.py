"""A stand-in adapter for `layoutproof fuzz --against` (tests/solver_tests/fuzz/test_fuzz_against_jobs.py): it speaks the line
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
  --twice              write each answer twice, in one write (two answer lines for one record)
  --empty              answer each record with {} (no verdict: agrees with everything)
  --read-all           read every record before answering any (the protocol answers each line first)
  --silent             read the records and never answer
  --blank-forever      after the first record, write blank lines for ever
  --huge-line          answer the first record with a line of 300 MB, written 64 KiB at a time
  --no-newline         answer the first record without the newline, then wait for ever
  --no-newline-exit    answer the first record without the newline, then exit (status 0)
  --answer-first       write an answer line before reading anything
  --deep               answer each record with a JSON list nested 100,000 deep
--pids DIR: create DIR/<pid> at start, so that a test counts the adapter processes.
"""
from __future__ import annotations

import json
import os
import sys
import time

from solver.fuzz.adapters import protocol


def verdict(record) -> dict:
    index = record.get("index", 0) if isinstance(record, dict) else 0
    if index % 5 == 0:
        return {"verdict": None, "detail": f"stand-in: not judged ({index})"}
    return {"verdict": "refuse" if index % 3 == 0 else "accept", "detail": f"stand-in: case {index}"}


def _write(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def hostile(argv) -> None:
    """The modes that never give a whole answer to the record just read."""
    if "--silent" in argv:
        time.sleep(3600)
    if "--blank-forever" in argv:
        while True:
            _write("\n" * 65536)
    if "--huge-line" in argv:
        _write('{"verdict": null, "detail": "')
        for _ in range(300 * 16):
            _write("x" * 65536)
        _write('"}\n')
    if "--no-newline" in argv or "--no-newline-exit" in argv:
        _write(json.dumps({"verdict": None, "detail": "stand-in: no newline"}))
        if "--no-newline-exit" in argv:
            sys.exit(0)
        time.sleep(3600)


def main(argv) -> int:
    if "--pids" in argv:
        folder = argv[argv.index("--pids") + 1]
        open(os.path.join(folder, str(os.getpid())), "w").close()
    if "--exit-at-once" in argv:
        print("stand-in: cannot start (asked to)", file=sys.stderr)
        return 4
    limit = int(argv[argv.index("--end-after") + 1]) if "--end-after" in argv else None
    if "--answer-first" in argv:
        _write(json.dumps({"verdict": "accept", "detail": "stand-in: before any record"}) + "\n")
    lines = sys.stdin.readlines() if "--read-all" in argv else iter(sys.stdin.readline, "")
    answered = 0
    for line in lines:
        if not line.strip():
            continue
        if limit is not None and answered == limit:
            print(f"stand-in: stopping after {limit} answers", file=sys.stderr)
            return 0
        hostile(argv)
        if "--not-json" in argv:
            reply = "no verdict here\n"
        elif "--not-object" in argv:
            reply = json.dumps(["accept"]) + "\n"
        elif "--deep" in argv:
            reply = "[" * 100_000 + "]" * 100_000 + "\n"
        elif "--empty" in argv:
            reply = "{}\n"
        else:
            reply = protocol.answer_line(line, verdict)
        _write(("\n" if "--blank-lines" in argv else "") + reply * (2 if "--twice" in argv else 1))
        answered += 1
    if "--extra-line" in argv:
        sys.stdout.write(json.dumps({"verdict": "accept", "detail": "stand-in: one answer too many"}) + "\n")
    if "--fail-at-end" in argv:
        print("stand-in: failing at the end (asked to)", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
