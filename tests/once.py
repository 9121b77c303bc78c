"""Work that a test module needs once per test run, not once per xdist worker: the first worker to ask
computes it and the others read its answer, from the run's own temporary folder, under a lock."""
from __future__ import annotations

import fcntl
import json
import os


def once_per_run(tmp_path_factory, name: str, compute):
    """compute() (a JSON value), computed once in this test run whatever the number of workers."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return compute()
    shared = tmp_path_factory.getbasetemp().parent          # this run's folder, shared by its workers
    answer = shared / f"{name}.json"
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not answer.exists():
            answer.write_text(json.dumps(compute()))
        return json.loads(answer.read_text())


# The script that runs `layoutproof` command lines in one interpreter: [[exit status, stdout, stderr], ...]
# for the JSON list of command lines on stdin (each a whole `layoutproof ...` line, as a user types it).
RUN_MANY = ("import contextlib, io, json, shlex, sys\n"
            "from solver.cli.main import main\n"
            "found = []\n"
            "for line in json.load(sys.stdin):\n"
            "    out, err = io.StringIO(), io.StringIO()\n"
            "    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):\n"
            "        status = main(shlex.split(line)[1:])\n"
            "    found.append([status, out.getvalue(), err.getvalue()[-500:]])\n"
            "print(json.dumps(found))\n")
