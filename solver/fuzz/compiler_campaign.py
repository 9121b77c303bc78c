"""Compiler campaigns (issue 19): cases compiled by a real compiler through its `fuzz --against` adapter and
judged by spec, here (N threads, each driving one adapter process) or on a Dask distributed cluster
(`--scheduler ADDRESS`, `local` for a LocalCluster on this machine; the optional extra `distributed`),
with the same bytes out whichever runs it; then merged, deduplicated, into a recording and its
counterexample file. Triton (solver/fuzz/adapters/triton_gluon.py `campaign`) and the CuTe DSL
(solver/fuzz/compilers/cute_dsl.py `main`) both run here; each brings a `Compiler`: its adapter module, the
protocol record of a case, the answer for a compiler that killed its process, and its judge.
`layoutproof fuzz --against CMD --jobs N | --scheduler ADDRESS` runs here too, with `ADAPTER`: any adapter
given as a shell command line (`shell_argv`), each fuzz record sent as it is, the verdicts judged by
solver/fuzz/adapters/protocol.py `difference`, and an adapter that ends early stopping the run.

Work unit: a chunk of CHUNK consecutive cases (fewer when the campaign is short: at least 4 chunks for
each worker thread, so that none waits on the last one). The worker compiles the chunk's cases that have no
cached answer through an adapter process it keeps from chunk to chunk (one per worker thread, started again after
the compiler kills it), and judges every case of the chunk. Judging runs where the compiling runs: it is
pure Python (spec, about 8 ms a Triton case), so a cluster spreads it instead of the client spending hours
of one core at a million cases; the worker then has the repository anyway (the adapter imports it). The
client appends each compiled answer to the cache (`--cache`, JSON lines {"case", "answer"}) as its chunk
comes back, in any order, so an interrupted campaign resumes where it stopped; it writes the rows
({"case", "answer", "judgement"}, one JSON line each) in case order, a chunk waiting for those before it.
An answer and a judgement depend only on the case, so the rows are the same bytes for every executor and
number of workers (an answer carries no timing: the seconds are in the summary only).

Merging (`python -m solver.fuzz.compiler_campaign merge`, or a campaign's --record/--counterexamples): a
case's key is its canonical JSON (`case_key`); a recording keeps each case once, those it had first and in
their places (the first answer seen wins: `merge_rows`), and a counterexample file one entry per class (the
finding), which a merge grows by the cases new to the recording (count, breakdowns, indices, smallest
reproducer) and whose other fields, the hand-written notes among them, it leaves as they are
(`merge_classes`). So merges count each case once whatever the runs' seeds, machines or overlaps, and a
merge of what is already recorded changes nothing. Nothing is merged unless the user names the files.
"""
from __future__ import annotations

import atexit
import contextlib
import json
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, Optional

from solver.fuzz.adapters import protocol

CHUNK = 50                  # cases per work unit: about a minute of Triton compiling
MAX_CASES = 1_000_000       # cases per arch in one campaign (the scale); more is several merged runs
PATIENCE = 10_000           # a sampler gives up after this many draws in a row that bring no new case
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))   # holds solver/


@dataclass(frozen=True)
class Compiler:
    """What the runner needs of one compiler (module-level functions, so that Dask ships it by name)."""
    name: str                                     # "triton", "cute_dsl": messages and the progress label
    module: str                                   # the adapter, run as `PYTHON -m MODULE`
    record: Callable[[dict], dict]                # a case -> its protocol record
    crashed: Callable[[int, list], dict]          # (exit status, last lines of its stderr) -> the answer
    judge: Callable[[dict, dict], dict]           # (case, answer) -> the judgement (plain JSON)
    log_env: Optional[str] = None                 # env variable naming the file the adapter writes the
                                                  # compiler's diagnostics to (else its stderr goes there)
    clean_exit: bool = False                      # an adapter that exits non-zero at the end of its input
                                                  # broke the protocol (fuzz --against's adapters; a
                                                  # compiler's exit at shutdown is not judged)


def case_key(case) -> str:
    """The canonical JSON of a case: equal cases, equal keys, whatever their key order."""
    return json.dumps(case, sort_keys=True)


def distinct(draws: Iterator[dict], count: int, patience: int = PATIENCE) -> list:
    """The first `count` distinct cases of `draws` (a sampler's stream), fewer when the stream ends or
    `patience` draws in a row bring nothing new (a parameter space smaller than `count`)."""
    seen, out, stale = set(), [], 0
    for case in draws:
        if len(out) >= count or stale >= patience:
            break
        key = case_key(case)
        if key in seen:
            stale += 1
            continue
        seen.add(key)
        out.append(case)
        stale = 0
    return out


class AdapterError(RuntimeError):
    """The adapter cannot be started or breaks the protocol: the campaign stops (one line, exit 2); what
    was compiled is in the cache."""


# --- The adapter process -----------------------------------------------------------------------------------
# Limits on what an adapter writes for one record (fuzz --against: docs/CLI.md; the compilers' answers are a
# few KB): more bytes than this before the answer's newline (blank lines included) break the protocol, so
# that neither a huge line nor an endless stream of blank lines holds the run or its memory.
MAX_ANSWER_BYTES = 1 << 20
CLOSE_SECONDS = 30          # what an adapter may take to end once its input is closed
LOG_TAIL_BYTES = 1 << 16    # the end of an adapter's stderr that its messages are read from
READ_BYTES = 1 << 16


class AnswerPipe:
    """The two pipes to an adapter process, read and written as bytes under a deadline (select), so that an
    adapter that never answers, answers on a line that never ends, or floods its output stops the run
    instead of holding it (a deadline of None waits for ever, as a compiler campaign does). What the
    adapter wrote past an answer stays in `pending` for the one-to-one check."""

    def __init__(self, proc):
        self.proc = proc
        self.pending = bytearray()          # read from the adapter, not yet taken as an answer
        self.ended = False                  # its stdout is at its end

    def _wait(self, streams: list, writing: bool, deadline: Optional[float]) -> bool:
        """Whether the stream is ready before `deadline` (time.monotonic(); None: wait as long as it takes)."""
        import select
        timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
        ready = select.select([], streams, [], timeout) if writing else select.select(streams, [], [], timeout)
        return bool(ready[1] if writing else ready[0])

    def write(self, data: bytes, deadline: Optional[float]) -> None:
        """All of `data` to the adapter's stdin; TimeoutError when it does not read it before the deadline,
        BrokenPipeError when it has ended."""
        fd = self.proc.stdin.fileno()
        view = memoryview(data)
        while view:
            if not self._wait([fd], True, deadline):
                raise TimeoutError
            view = view[os.write(fd, view):]

    def read_more(self, deadline: Optional[float]) -> bool:
        """Read what the adapter has written into `pending`, waiting until `deadline` (TimeoutError after);
        False at the end of its output."""
        if self.ended:
            return False
        fd = self.proc.stdout.fileno()
        if not self._wait([fd], False, deadline):
            raise TimeoutError
        chunk = os.read(fd, READ_BYTES)
        self.ended = not chunk
        self.pending += chunk
        return bool(chunk)

    def poll(self) -> None:
        """Take in what the adapter has already written, without waiting."""
        while not self.ended:
            try:
                if not self.read_more(time.monotonic()):
                    return
            except TimeoutError:
                return
            if len(self.pending) > MAX_ANSWER_BYTES:
                return

    def line(self, deadline: Optional[float]) -> Optional[bytes]:
        """The next non-blank line (the protocol answers on non-blank lines), without its newline; None at
        the end of the adapter's output. TimeoutError past the deadline, OverflowError when more than
        MAX_ANSWER_BYTES come without an answer line, EOFError when the output ends inside a line."""
        taken = 0                           # bytes of blank lines before the answer
        while True:
            rest = self.pending.lstrip()
            taken += len(self.pending) - len(rest)
            self.pending = rest
            end = rest.find(b"\n")
            if taken + (len(rest) if end < 0 else end) > MAX_ANSWER_BYTES:
                raise OverflowError
            if end >= 0:
                line = bytes(rest[:end])
                del self.pending[:end + 1]
                return line
            if not self.read_more(deadline):
                if self.pending:
                    raise EOFError
                return None

    def rest(self, deadline: float) -> bytes:
        """Everything the adapter still writes up to its end (at most MAX_ANSWER_BYTES more; less when the
        deadline comes first)."""
        try:
            while len(self.pending) <= MAX_ANSWER_BYTES and self.read_more(deadline):
                pass
        except TimeoutError:
            pass
        return bytes(self.pending)


def _kill_group(proc) -> int:
    """Kill an adapter and every process of its group (the shell's command, a compiler it started); its exit
    status."""
    import signal
    if proc.returncode is None:           # not reaped yet: the group id is still the adapter's own
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):            # the group has ended already
            proc.kill()
    return proc.wait()


def _which(case) -> str:
    """A case as messages name it: its fuzz index when it has one."""
    return f"case {case['index']}" if isinstance(case, dict) and isinstance(case.get("index"), int) else "a case"


class Child:
    """One adapter process speaking the line protocol (solver/fuzz/adapters/protocol.py); started on the
    first question and again after the compiler killed it (an abort inside its C++ ends the process). Its
    stderr goes to a log, and so do the compiler's diagnostics where the compiler names a `log_env`; after
    a crash the answer is made from the diagnostics (else the stderr).

    One answer per record, strictly: the record is sent only when the adapter has written nothing since its
    last answer, and the answer is its next non-blank line, with nothing after it; an answer that does not
    come within the deadline (`ask`'s seconds, fuzz --answer-timeout), a line over MAX_ANSWER_BYTES, output
    that ends inside a line, and any answer line beyond one per record break the protocol (AdapterError)."""

    def __init__(self, command: list, compiler: Compiler):
        self.command, self.compiler = list(command), compiler
        self.proc = None
        self.pipe: Optional[AnswerPipe] = None
        self.logs: list = []       # [stderr] or [diagnostics, stderr]
        self.answered = 0          # answers since the process started

    def _start(self) -> None:
        import subprocess
        import tempfile
        self._remove_logs()
        for _ in range(2 if self.compiler.log_env else 1):
            handle, path = tempfile.mkstemp(prefix=f"layoutproof-{self.compiler.name.strip('-')}-", suffix=".log")
            os.close(handle)
            self.logs.append(path)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p))
        if self.compiler.log_env:
            env[self.compiler.log_env] = self.logs[0]
        self.answered = 0
        with open(self.logs[-1], "wb") as stderr:
            try:
                # its own process group: ending it ends what it started (`/bin/sh -c CMD` runs CMD as a child)
                self.proc = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                             stderr=stderr, bufsize=0, env=env, start_new_session=True)
            except OSError as error:
                raise AdapterError(f"cannot start the {self.compiler.name} adapter "
                                   f"{shown(self.command)!r:.120}: {error.strerror or error}") from None
        self.pipe = AnswerPipe(self.proc)

    def _log_lines(self) -> list:
        """The non-blank lines at the end of the adapter's log (its last LOG_TAIL_BYTES)."""
        for path in self.logs:
            try:
                with open(path, "rb") as handle:
                    handle.seek(max(0, os.path.getsize(path) - LOG_TAIL_BYTES))
                    text = handle.read().decode(errors="replace")
            except OSError:                                     # removed by a close meanwhile
                continue
            lines = [line.strip() for line in text.splitlines() if line.strip()]
            if lines:
                return lines
        return []

    def _remove_logs(self) -> None:
        for path in self.logs:
            with contextlib.suppress(FileNotFoundError):       # removed by a close meanwhile
                os.unlink(path)
        self.logs = []

    def _broken(self, what: str) -> AdapterError:
        """The adapter broke the protocol: it is ended, and the error says what it did."""
        self.kill()
        return AdapterError(f"the {self.compiler.name} adapter {shown(self.command)!r:.120} {what}")

    def kill(self) -> None:
        """End the process now (its output unread) and remove its logs."""
        proc, self.proc, self.pipe = self.proc, None, None
        if proc is not None:
            _kill_group(proc)
        self._remove_logs()

    def ask(self, case: dict, seconds: Optional[float] = None) -> dict:
        """The adapter's answer to `case`, within `seconds` of sending it (None: no deadline)."""
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        proc, pipe = self.proc, self.pipe          # kept: a Dask worker may close the Child meanwhile
        pipe.poll()
        if pipe.pending.strip():
            raise self._broken(f"wrote {bytes(pipe.pending.strip())[:80].decode(errors='replace')!r} before it "
                               f"was sent {_which(case)}: an answer line more than the records it was sent")
        deadline = None if seconds is None else time.monotonic() + seconds
        try:
            try:
                pipe.write((json.dumps(self.compiler.record(case)) + "\n").encode(), deadline)
            except BrokenPipeError:
                pass                        # it ended: what it wrote before, then the end of its output
            line = pipe.line(deadline)
        except TimeoutError:
            raise self._broken(f"gave no answer to {_which(case)} within {seconds:g} s (--answer-timeout; an "
                               f"adapter answers each line before it reads the next)") from None
        except OverflowError:
            raise self._broken(f"wrote more than {MAX_ANSWER_BYTES} bytes without an answer line "
                               f"to {_which(case)}") from None
        except EOFError:
            raise self._broken(f"ended inside its answer line to {_which(case)} (no newline)") from None
        if line is not None:
            return self._answer(case, line, pipe)
        return self._ended(proc, deadline)

    def _answer(self, case: dict, line: bytes, pipe: AnswerPipe) -> dict:
        self.answered += 1
        text = line.decode(errors="replace").strip()
        try:
            answer = json.loads(text)
        except json.JSONDecodeError:
            raise self._broken(f"answered {text[:80]!r}, not JSON") from None
        except RecursionError:
            raise self._broken(f"answered {text[:80]!r}, JSON nested too deep") from None
        if pipe.pending.strip():
            raise self._broken(f"wrote more than one answer line to {_which(case)}, the second "
                               f"{bytes(pipe.pending.strip())[:80].decode(errors='replace')!r}")
        return answer

    def _ended(self, proc, deadline: Optional[float]) -> dict:
        """The adapter's output ended before its answer: it cannot run, or its compiler killed it."""
        try:
            code = proc.wait(timeout=CLOSE_SECONDS if deadline is None else max(0.0, deadline - time.monotonic()))
        except Exception:                                       # noqa: BLE001  its output closed, it still runs
            code = _kill_group(proc)
        if self.proc is proc:
            self.proc = self.pipe = None
        lines = self._log_lines()
        self._remove_logs()
        if code > 0 and not self.answered:
            # a Python error before its first answer: the adapter cannot run (no compiler in that
            # interpreter, ...), not a compiler that killed it (a signal) on one case
            raise AdapterError(f"the {self.compiler.name} adapter {shown(self.command)!r:.120} exited with "
                               f"status {code} before answering: {lines[-1] if lines else 'no message'}")
        return self.compiler.crashed(code, lines)

    def close(self) -> Optional[str]:
        """End the process: its stdin closed (the protocol's end of input), what it still writes read to
        its end. An answer line there is one more than the records it was sent (the answers it gave were
        then not theirs): returned as the error, else None."""
        extra = []
        # this process and pipe, whatever another thread does with the Child meanwhile (a Dask worker closes
        # its children while a cancelled chunk may still be asking: the campaign has stopped then)
        proc, pipe = self.proc, self.pipe
        if proc is not None and pipe is not None:
            deadline = time.monotonic() + CLOSE_SECONDS
            try:
                proc.stdin.close()
            except OSError:
                pass
            try:
                rest = pipe.rest(deadline)
            except (OSError, ValueError):                       # closed by the asking thread meanwhile
                rest = b""
            extra = [line.strip() for line in rest.decode(errors="replace").splitlines() if line.strip()]
            try:
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except Exception:                                   # noqa: BLE001  a compiler that hangs on EOF
                _kill_group(proc)
            code, self.proc, self.pipe = proc.returncode, None, None
            if code and self.compiler.clean_exit and not extra:
                lines = self._log_lines()
                self._remove_logs()
                return (f"the {self.compiler.name} adapter {shown(self.command)!r:.120} exited with status {code} "
                        f"at the end of its input: {lines[-1][:80] if lines else 'no message'}")
        self._remove_logs()
        if extra:
            return (f"the {self.compiler.name} adapter {shown(self.command)!r:.120} wrote {len(extra)} answer "
                    f"line(s) more than the records it was sent, the first {extra[0][:80]!r}")
        return None


_CHILDREN: dict = {}
_CHILDREN_LOCK = threading.Lock()
_STOP = threading.Event()         # set when a local campaign stops early: its threads end after their case


def _child(command: list, compiler: Compiler) -> Child:
    """This thread's adapter process for `command`, kept from chunk to chunk."""
    key = (tuple(command), compiler.name, threading.get_ident())
    with _CHILDREN_LOCK:
        if key not in _CHILDREN:
            _CHILDREN[key] = Child(command, compiler)
        return _CHILDREN[key]


def close_children(stopped: bool = False) -> list:
    """End every adapter process of this process (the client's threads, or a Dask worker's); the errors
    of those that answered more lines than they were sent records. `stopped`: the campaign stopped early
    (an error, an interruption): the processes are killed, not waited for (one may be waiting for ever on
    a record whose answer nobody will read)."""
    with _CHILDREN_LOCK:
        children = list(_CHILDREN.values())
        _CHILDREN.clear()
    if stopped:
        for child in children:
            child.kill()
        return []
    return [error for error in (child.close() for child in children) if error]


atexit.register(close_children)


def adapter_command(compiler: Compiler, python: Optional[str]) -> list:
    """`PYTHON -m MODULE`; no PYTHON: the interpreter running this (on a cluster, the worker's own)."""
    return [python or sys.executable, "-m", compiler.module]


def run_chunk(job: tuple) -> list:
    """One work unit (a plain function of plain values, so that Dask ships it): job = (compiler, adapter
    command or None (`adapter_command`), python, cases, cached answers or None, the seconds an answer may
    take or None) -> [[answer, judgement, compile seconds or None (cached)], ...]."""
    compiler, command, python, cases, cached, answer_seconds = job
    command = command or adapter_command(compiler, python)
    out = []
    for case, answer in zip(cases, cached):
        if _STOP.is_set():
            raise InterruptedError("the campaign stopped")
        seconds = None
        if answer is None:
            started = time.monotonic()
            answer = _child(command, compiler).ask(case, answer_seconds)
            seconds = time.monotonic() - started
        out.append([answer, compiler.judge(case, answer), seconds])
    return out


def run_chunk_or_error(job: tuple):
    """run_chunk's rows, or the AdapterError / ProtocolError of an adapter that cannot run or breaks the
    protocol, returned rather than raised: the client raises it, as one line (a Dask worker would log a
    task that raises with its traceback)."""
    try:
        return run_chunk(job)
    except (AdapterError, protocol.ProtocolError) as error:
        return error


# --- Executors: fn(job) for every job, yielded as (job index, result) when each is done --------------------
SKIPPED = object()          # a chunk not run because another one failed (thread_executor)


def thread_executor(jobs: int):
    """`jobs` threads here, each with its own adapter process. After a chunk's error (fn returns it) no
    chunk starts: the run stops with it."""
    def mapper(fn, items):
        pool = ThreadPoolExecutor(max(1, jobs))
        failed = threading.Event()

        def unless_failed(item):
            if failed.is_set():
                return SKIPPED
            result = fn(item)
            if isinstance(result, Exception):
                failed.set()
            return result
        done = False
        try:
            futures = {pool.submit(unless_failed, item): i for i, item in enumerate(items)}
            for future in as_completed(futures):
                result = future.result()
                # a chunk skipped after another's error can be done before that error's future is: it is
                # not yielded, so that the error itself (still to come) is what the caller sees
                if result is not SKIPPED:
                    yield futures[future], result
            done = True
        finally:
            _STOP.set()
            pool.shutdown(wait=True, cancel_futures=True)
            _STOP.clear()
            extra = close_children(stopped=not done)
        if extra:                   # every chunk done, but an adapter's answers were not its records'
            raise AdapterError(extra[0])
    return mapper


def dask_executor(client):
    """A Dask distributed client: every chunk is submitted at once; the workers' adapter processes end
    with the campaign."""
    def mapper(fn, items):
        from distributed import as_completed as dask_completed
        futures = client.map(fn, list(items), pure=False)
        index = {future.key: i for i, future in enumerate(futures)}
        done = False
        try:
            for future, result in dask_completed(futures, with_results=True):
                yield index[future.key], result
            done = True
        finally:
            client.cancel(futures)
            try:
                extra = [error for errors in client.run(close_children, not done).values() for error in errors]
            except Exception:                                   # noqa: BLE001  a worker already gone
                extra = []
        if extra:                   # every chunk done, but an adapter's answers were not its records'
            raise AdapterError(extra[0])
    return mapper


# --- An adapter given as a command line (`layoutproof fuzz --against CMD`) ---------------------------------
SHELL = ["/bin/sh", "-c"]


def shell_argv(command: str) -> list:
    """CMD as a shell runs it, as subprocess's shell=True does (pipes, variables, `cd x && ...`); on
    Windows, its words (shlex; ValueError when they do not parse)."""
    if os.name == "nt":
        import shlex
        return shlex.split(command)
    return SHELL + [command]


def shown(command: list) -> str:
    """An adapter's command as the user wrote it."""
    return command[2] if command[:2] == SHELL and len(command) == 3 else " ".join(command)


def _record_as_is(record: dict) -> dict:
    return record


def _ended(code: int, lines: list) -> dict:
    """An adapter of `fuzz --against` that ends before answering every record breaks the protocol (its
    compiler is not expected to kill it): the run stops."""
    status = f"status {code}" if code >= 0 else f"signal {-code}"
    raise AdapterError(f"the --against adapter ended ({status}) with cases unanswered: "
                       f"{lines[-1] if lines else 'no message'}")


# Any adapter: each fuzz record is its own protocol record; the judgement is the entry `fuzz --against`
# lists when the verdicts differ (None when they agree or the adapter has none).
ADAPTER = Compiler("--against", "", _record_as_is, _ended, protocol.difference, clean_exit=True)


# --- The answer cache ------------------------------------------------------------------------------------
class AnswerCache:
    """Answers by case, JSON lines {"case", "answer"} appended as they come (flushed), read back on the next
    run; a last line cut short by an interruption is skipped. Lines {"key": sha1, "answer"} of the older
    Triton cache are read too (looked up by `legacy_key`)."""

    def __init__(self, path: Optional[str], legacy_key: Optional[Callable[[dict], str]] = None):
        self.path, self.legacy_key, self.answers = path, legacy_key, {}
        if path and os.path.exists(path):
            with open(path) as handle:
                for line in handle:
                    try:
                        row = json.loads(line)
                        key = case_key(row["case"]) if "case" in row else "legacy:" + row["key"]
                        self.answers[key] = plain_answer(row["answer"])
                    except (json.JSONDecodeError, KeyError, TypeError):
                        continue
        self.handle = open(path, "a") if path else None

    def get(self, case: dict) -> Optional[dict]:
        found = self.answers.get(case_key(case))
        if found is None and self.legacy_key is not None:
            found = self.answers.get("legacy:" + self.legacy_key(case))
        return found

    def add(self, case: dict, answer: dict) -> None:
        """Appended to the file (not kept here: the campaign asks for each case once)."""
        if self.handle:
            self.handle.write(json.dumps({"case": case, "answer": answer}) + "\n")
            self.handle.flush()

    def close(self) -> None:
        if self.handle:
            self.handle.close()


def plain_answer(answer: dict) -> dict:
    """An answer without the compile time older runs put in it (it differs from run to run)."""
    return {k: v for k, v in answer.items() if k != "seconds"} if isinstance(answer, dict) else answer


# --- The campaign ------------------------------------------------------------------------------------------
def run(compiler: Compiler, cases: list, out_path: Optional[str], tally: Callable[[dict, dict], None], *,
        jobs: int = 1, client=None, cache_path: Optional[str] = None, python: Optional[str] = None,
        command: Optional[list] = None, legacy_key: Optional[Callable[[dict], str]] = None,
        answer_seconds: Optional[float] = None) -> dict:
    """Compile and judge `cases` (chunks on `jobs` local threads, or on the Dask `client`'s cluster; each
    asks `command`, by default `PYTHON -m <the compiler's adapter>`, each answer due within `answer_seconds`
    (None: no deadline));
    write their rows to `out_path` in case order (no file: None; the rows are only tallied); returns
    {"summary": tally of every row (in order), "compiled", "cached", "compile_seconds" (wall time),
    "worker_seconds", "configs_per_second"}."""
    from solver.shell import Progress
    cache = AnswerCache(cache_path, legacy_key)
    slots = jobs if client is None else max(1, sum(w.get("nthreads", 1) for w in
                                                   client.scheduler_info().get("workers", {}).values()))
    size = max(1, min(CHUNK, -(-len(cases) // (4 * slots))))     # at least 4 chunks a slot when short
    chunks = [cases[i:i + size] for i in range(0, len(cases), size)]
    jobs_list = [(compiler, command, python, chunk, [cache.get(c) for c in chunk], answer_seconds)
                 for chunk in chunks]
    to_compile = sum(answer is None for job in jobs_list for answer in job[4])
    mapper = dask_executor(client) if client is not None else thread_executor(min(jobs, max(1, len(chunks))))
    summary: dict = {}
    pending: dict = {}
    written = compiled = 0
    worker_seconds = 0.0
    started = time.monotonic()
    progress = Progress(f"{compiler.name} campaign", len(cases), "cases")
    results = mapper(run_chunk_or_error, jobs_list)
    try:
        with (open(out_path, "w") if out_path is not None else contextlib.nullcontext()) as out:
            for index, result in results:
                if isinstance(result, Exception):
                    raise result
                for case, (answer, _, seconds) in zip(chunks[index], result):
                    if seconds is not None:
                        cache.add(case, answer)
                        compiled += 1
                        worker_seconds += seconds
                pending[index] = result
                while written in pending:
                    for case, (answer, judgement, _) in zip(chunks[written], pending.pop(written)):
                        row = {"case": case, "answer": answer, "judgement": judgement}
                        if out is not None:
                            out.write(json.dumps(row, separators=(",", ":")) + "\n")
                        tally(summary, row)
                    written += 1
                progress.update(min(len(cases), written * size))
    finally:
        results.close()                     # an interrupted campaign stops its executor
        progress.close()
        cache.close()
    elapsed = time.monotonic() - started
    return {"summary": summary, "compiled": compiled, "cached": len(cases) - to_compile,
            "compile_seconds": round(elapsed, 1), "worker_seconds": round(worker_seconds, 1),
            "configs_per_second": round(compiled / elapsed, 3) if compiled and elapsed else None}


# --- Reading the files a merge takes: what is not what the merge reads is one line naming the file and the
#     field (CampaignUsage, exit 2), never a traceback ---------------------------------------------------------
def file_name(path) -> str:
    """A path as the messages show it: quoted, its end kept when long (the file's own name says which)."""
    text = repr(str(path))
    return text if len(text) <= 80 else "'..." + text[-76:]


def _parsed(text: str, where: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise CampaignUsage(f"{where}: not JSON ({error.msg} at line {error.lineno} column {error.colno})") from None
    except RecursionError:
        raise CampaignUsage(f"{where}: JSON nested too deep to read") from None


def read_json(path, where: str, gzipped: bool = False, lines: bool = False):
    """The JSON value of a file, or with `lines` its [(line number, value)] (blank lines skipped). `where`
    names the file in messages (the option and file_name). CampaignUsage when the file cannot be read, is no
    gzip file (gzipped) or is one cut short, is not UTF-8, is not JSON, or nests deeper than the parser goes."""
    import gzip
    import zlib

    def decoded(data: bytes, at: str) -> str:
        try:
            return data.decode()
        except UnicodeDecodeError as error:
            raise CampaignUsage(f"{at}: not UTF-8 text (byte {error.start})") from None
    try:
        with (gzip.open(path, "rb") if gzipped else open(path, "rb")) as handle:
            if not lines:
                return _parsed(decoded(handle.read(), where), where)
            out = []
            for number, data in enumerate(handle, 1):
                text = decoded(data, f"{where}, line {number}")
                if text.strip():
                    out.append((number, _parsed(text, f"{where}, line {number}")))
            return out
    except gzip.BadGzipFile:
        raise CampaignUsage(f"{where}: not a gzip file") from None
    except (EOFError, zlib.error) as error:
        raise CampaignUsage(f"{where}: a gzip file cut short or damaged ({' '.join(str(error).split())[:80]})") \
            from None
    except OSError as error:
        raise CampaignUsage(f"{where}: cannot read it ({error.strerror or error})") from None


# Shapes of JSON values, what a merge reads of each file (`conform`): a Python type (bool is no int: COUNT),
# Fields, ListOf, MapOf, OneOf, Checked, or a tuple of them (any one).
COUNT = "a count"                   # a non-negative integer


@dataclass(frozen=True)
class Fields:
    """An object with `required` fields and maybe `optional` ones (name -> shape); `closed`: no others."""
    required: tuple                 # ((name, shape), ...)
    optional: tuple = ()
    closed: bool = False


@dataclass(frozen=True)
class ListOf:
    item: object


@dataclass(frozen=True)
class MapOf:
    """An object whose every value has the shape (its keys are names: arches, findings, ...)."""
    value: object


@dataclass(frozen=True)
class OneOf:
    values: tuple


@dataclass(frozen=True)
class Checked:
    """A value `check` accepts (it raises ValueError saying why not): a compiler's own case check."""
    check: Callable


def fields(closed: bool = False, optional: Optional[dict] = None, **required) -> Fields:
    return Fields(tuple(required.items()), tuple((optional or {}).items()), closed)


def provenance_shape(**details) -> Fields:
    """A recording's provenance header (solver/provenance.py: exactly what, recorded_by, command, source, date
    and details), with the fields of its details a merge reads (name -> shape, each optional)."""
    return fields(closed=True, what=str, recorded_by=str, command=str, source=str, date=str,
                  details=fields(optional=details))


JSON_TYPES = {dict: "an object", list: "a list", str: "a string", int: "an integer", float: "a number",
              bool: "true or false", type(None): "null"}


def _kind(value) -> str:
    """A JSON value's type, in JSON's words."""
    return json.dumps(value) if value is None or isinstance(value, bool) else JSON_TYPES.get(type(value), "a number")


def _problem(value, shape, path: str) -> Optional[str]:
    """What is wrong with `value` against `shape` ("field: why"), None when nothing."""
    at = path or "the value"
    if isinstance(shape, tuple):
        problems = [_problem(value, one, path) for one in shape]
        return None if None in problems else problems[0]
    if shape == COUNT:
        ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
        return None if ok else f"{at}: expected a count (an integer >= 0), found {_kind(value)}"
    if isinstance(shape, type):
        ok = isinstance(value, shape) and not (isinstance(value, bool) and shape is not bool)
        return None if ok else f"{at}: expected {JSON_TYPES[shape]}, found {_kind(value)}"
    if isinstance(shape, OneOf):
        return None if value in shape.values else \
            f"{at}: expected one of {', '.join(map(json.dumps, shape.values))}, found {json.dumps(value)[:40]}"
    if isinstance(shape, Checked):
        try:
            shape.check(value)
        except (ValueError, TypeError, LookupError, AttributeError) as error:    # a check that trips on a type
            return f"{at}: {' '.join(str(error).split())[:120]}"
        return None
    container = dict if isinstance(shape, (Fields, MapOf)) else list
    if not isinstance(value, container):
        return f"{at}: expected {JSON_TYPES[container]}, found {_kind(value)}"
    if isinstance(shape, ListOf):
        return next(filter(None, (_problem(v, shape.item, f"{path}[{i}]") for i, v in enumerate(value))), None)
    if isinstance(shape, MapOf):
        return next(filter(None, (_problem(v, shape.value, f"{path}.{k}" if path else k) for k, v in value.items())),
                    None)
    named = dict(shape.required + shape.optional)
    for name, _ in shape.required:
        if name not in value:
            return f"{path + '.' if path else ''}{name}: missing"
    if shape.closed:
        extra = next((k for k in value if k not in named), None)
        if extra is not None:
            return f"{path + '.' if path else ''}{extra[:40]}: not a field of it"
    return next(filter(None, (_problem(value[k], named[k], f"{path}.{k}" if path else k)
                              for k in named if k in value)), None)


def conform(value, shape, where: str):
    """`value` when it has `shape`, else CampaignUsage "{where}: {the field}: {why}" (where names the file)."""
    problem = _problem(value, shape, "")
    if problem is not None:
        raise CampaignUsage(f"{where}: {problem}")
    return value


def judged(judge: Callable[[], object], where: str):
    """judge() on values read from a file (their shape checked, their meaning not); a judge that cannot read
    them (it raises on what it indexes, converts or compares) says so naming `where`, not with a traceback."""
    try:
        return judge()
    except (LookupError, TypeError, ValueError, AttributeError, ArithmeticError, RecursionError) as error:
        raise CampaignUsage(f"{where}: the judge cannot read it ({type(error).__name__}: "
                            f"{' '.join(str(error).split())[:80]})") from None


ROW = fields(case=dict, answer=dict, judgement=dict)      # any compiler's campaign row


def numbered_results(path: str, shape=ROW) -> list:
    """[(where: the file and line, row)] of the rows a campaign wrote (`run`'s out_path), each of `shape` (a
    compiler's ROW; by default any {case, answer, judgement} row); CampaignUsage naming the file, the line
    and the field when one is not."""
    where = f"{file_name(path)}: not campaign results"
    return [(f"{file_name(path)}, line {number}", conform(row, shape, f"{where}, line {number}"))
            for number, row in read_json(path, where, lines=True)]


def read_results(path: str, shape=ROW) -> list:
    """The rows of `numbered_results`."""
    return [row for _, row in numbered_results(path, shape)]


# --- Merging -----------------------------------------------------------------------------------------------
def merge_rows(rows: list, more: Iterable[dict]) -> tuple:
    """(rows then each row of `more` whose case is not there yet, the rows added, how many were already
    there with another answer). The rows already kept come first and keep their places, so indices into
    a recording stay valid after a merge."""
    seen = {case_key(r["case"]): r for r in rows}
    merged, added, conflicts = list(rows), [], 0
    for row in more:
        key = case_key(row["case"])
        if key in seen:
            conflicts += plain_answer(seen[key].get("answer")) != plain_answer(row.get("answer"))
            continue
        seen[key] = row
        merged.append(row)
        added.append(row)
    return merged, added, conflicts


def add_counts(total: dict, more: dict) -> dict:
    """Counts added key by key (nested dicts too), keys in first-seen order."""
    out = dict(total)
    for key, value in more.items():
        if isinstance(value, dict):
            out[key] = add_counts(out.get(key) or {}, value)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            out[key] = out.get(key, 0) + value
        else:
            out.setdefault(key, value)
    return out


def merge_classes(old: list, found: dict, key: Callable[[dict], tuple], grow: Callable[[dict, list], dict],
                  make: Callable[[tuple, list], dict]) -> list:
    """A counterexample file's classes after a merge: each old entry, in its place, grown by its new
    members (`found`: class key -> the rows new to the recording) where it has any, every other field
    (the hand-written notes, who is right, the examples chosen) as it was; then the classes new to the
    file, made from their members, in key order."""
    found = dict(found)
    out = [grow(entry, found.pop(key(entry))) if key(entry) in found else entry for entry in old]
    return out + [make(k, found[k]) for k in sorted(found)]


def added_counts(old: dict, rows: Iterable[dict], tally: Callable[[dict, dict], None]) -> dict:
    """`old`'s counts plus those of `rows` (each counted by `tally`), for the keys `old` has."""
    more: dict = {}
    for row in rows:
        tally(more, row)
    return add_counts(old, {k: v for k, v in more.items() if k in old})


def write_atomically(path: str, write: Callable[[object], None], binary_gzip: bool = False) -> None:
    """Write `path` through a temporary file beside it, renamed at the end: an interrupted merge leaves
    the old file whole. binary_gzip: gzipped with mtime 0 and no file name (the same content, the same bytes)."""
    from solver import provenance
    folder = os.path.dirname(os.path.abspath(path))
    temporary = os.path.join(folder, f".{os.path.basename(path)}.{os.getpid()}.tmp")
    try:
        with (provenance.gzip_text(temporary) if binary_gzip else open(temporary, "w")) as handle:
            write(handle)
        os.replace(temporary, path)
    except OSError as error:
        raise CampaignUsage(f"{file_name(path)}: cannot write it ({error.strerror or error})") from None
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


# --- The command line both campaigns share -----------------------------------------------------------------
class CampaignUsage(ValueError):
    """A bad command line or file: one line on stderr, exit 2."""


def count_argument(text: str) -> int:
    from solver.shell import positive_number
    import argparse
    value = positive_number(text)
    if value > MAX_CASES:
        raise argparse.ArgumentTypeError(f"{text[:40]}: at most {MAX_CASES} cases per arch; a larger "
                                         "campaign is several runs with other --seed values, merged")
    return value


def add_arguments(parser, record_help: str, counterexamples_default: str) -> None:
    """The options of a distributed campaign (the compilers' own options stay in their mains)."""
    from solver.shell import job_count
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--jobs", type=job_count, default=os.cpu_count() or 1,
                       help="adapter processes on this machine, one per thread (1 to 256; default: the cores)")
    where.add_argument("--scheduler", metavar="ADDRESS", default=None,
                       help="run the chunks of %d cases on a Dask distributed cluster (tcp://host:8786, or "
                            "'local' for a local cluster; pip install 'layoutproof[distributed]'); the same "
                            "output as --jobs" % CHUNK)
    parser.add_argument("--adapter", metavar="CMD", default=None,
                        help="the adapter command instead of PYTHON -m <the compiler's adapter>, e.g. a recorded "
                             "compiler: 'python -m solver.fuzz.adapters.replay RECORDING'")
    parser.add_argument("--cache", metavar="FILE", default=None,
                        help="JSON lines of answers by case, appended as they come: a campaign run again "
                             "with it compiles only what is missing")
    parser.add_argument("--record", metavar="FILE", default=None, help=record_help)
    parser.add_argument("--counterexamples", metavar="FILE", default=None,
                        help="merge the recording's disagreements, by class, into FILE (created if missing; "
                             "its notes are kept); needs --record. Default: none, nothing is merged (the "
                             f"repository's file is {counterexamples_default})")


def connect(args):
    """The Dask client of --scheduler, or None; CampaignUsage (exit 2) when Dask is missing or the
    scheduler does not answer within campaign.CONNECT_SECONDS."""
    if args.scheduler is None:
        return None
    from solver.fuzz import campaign
    try:
        return campaign.connect(args.scheduler)
    except ImportError as error:
        raise CampaignUsage(str(error)) from None
    except ValueError as error:                 # not an address we take, or no Dask scheduler answers there
        raise CampaignUsage(f"--scheduler {args.scheduler!r:.80}: {' '.join(str(error).split())[:200]}") from None
    except OSError as error:                    # nothing answers
        raise CampaignUsage(f"--scheduler {args.scheduler!r:.80}: cannot connect "
                            f"({' '.join(str(error).split())[:200]})") from None


def disconnect(client) -> None:
    """Close the --scheduler client, and the local cluster it started ('local'), whose workers then say
    nothing of the tasks a stopped campaign cancelled (their log is this terminal)."""
    if client is not None:
        cluster = getattr(client, "cluster", None)
        if cluster is not None:
            try:
                client.run(_quiet_worker_shutdown)
            except Exception:                                   # noqa: BLE001  a worker already gone
                pass
        client.close()
        if cluster is not None:
            cluster.close()


def _quiet_worker_shutdown() -> None:
    """On a local cluster's worker about to be closed: its warnings of tasks cancelled mid-run are not shown."""
    import logging
    logging.getLogger("distributed.worker.state_machine").setLevel(logging.ERROR)


def adapter_argument(args) -> Optional[list]:
    """--adapter CMD as argv (CampaignUsage when it does not parse)."""
    if not args.adapter:
        return None
    import shlex
    try:
        command = shlex.split(args.adapter)
    except ValueError as error:
        raise CampaignUsage(f"--adapter {args.adapter!r:.80}: {error}") from None
    if not command:
        raise CampaignUsage("--adapter: an empty command")
    return command


def check_files(args) -> None:
    """Before any compiling: --counterexamples needs --record, and an existing counterexample file an
    existing recording (its classes count that recording's cases); the files' folders exist."""
    if args.counterexamples and not args.record:
        raise CampaignUsage("--counterexamples needs --record (the recording its classes point into)")
    if args.counterexamples and os.path.exists(args.counterexamples) and not os.path.exists(args.record):
        raise CampaignUsage(f"--counterexamples {args.counterexamples!r:.80} exists and counts the cases of "
                            f"its own recording; --record {args.record!r:.80} does not exist")
    for path in (args.out, args.cache, args.record, args.counterexamples):
        if path and not os.path.isdir(os.path.dirname(os.path.abspath(path))):
            raise CampaignUsage(f"{path!r:.80}: no such folder")


def main_guard(run_main: Callable[[], int], prog: str) -> int:
    """Run a campaign's main: a usage error is one line on stderr, exit 2."""
    from solver.shell import UsageError
    try:
        return run_main()
    except (CampaignUsage, UsageError, AdapterError) as error:
        text = " ".join(str(error).split())
        print(text if text.startswith(prog) else f"{prog}: {text}", file=sys.stderr)
        return 2


# --- `python -m solver.fuzz.compiler_campaign merge`: runs made anywhere, merged -----------------------------
PROG = "python -m solver.fuzz.compiler_campaign"
MERGERS = {"triton": "solver.fuzz.adapters.triton_gluon", "cute_dsl": "solver.fuzz.compilers.cute_dsl"}


def main(argv=None) -> int:
    return main_guard(lambda: _main(argv), PROG)


def _main(argv=None) -> int:
    import importlib
    from solver.shell import Parser
    parser = Parser(prog=PROG, description="merge compiler campaigns (the --out files of runs with other seeds, "
                                           "on other machines, or cut short) into a recording and its "
                                           "counterexample file, each case once")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    merge = sub.add_parser("merge", help="merge campaign results into a recording (and counterexamples)")
    merge.add_argument("results", nargs="+", help="--out files of campaigns (JSON lines: case, answer, judgement)")
    merge.add_argument("--compiler", choices=sorted(MERGERS), required=True)
    merge.add_argument("--record", metavar="FILE", required=True, help="the recording (created if missing)")
    merge.add_argument("--counterexamples", metavar="FILE", default=None,
                       help="also merge the disagreements, by class, into FILE (created if missing, notes kept); "
                            "default: none")
    args = parser.parse_args(argv)
    args.out = args.cache = None
    check_files(args)
    numbered = [pair for path in args.results for pair in numbered_results(path)]
    merged = importlib.import_module(MERGERS[args.compiler]).merge(
        [row for _, row in numbered], args.record, args.counterexamples,
        f"{PROG} merge --compiler {args.compiler} " + " ".join(args.results), origins=[w for w, _ in numbered])
    print(json.dumps(merged, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
