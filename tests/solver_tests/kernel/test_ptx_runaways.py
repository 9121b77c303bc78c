"""The kernel reader (`layoutproof ptx descriptors`) is linear in its input: the small files that ran away
before issue 25 (tests/ptx_runaways.py) each finish in seconds, in bounded memory, and take at most about
four times the time when their size is multiplied by four.

Three measures per file, all in this process:
* at the size issue 25 reported (a few hundred KB), the whole command runs under TIME_BOUND seconds
  (generous: a slow 2-core box; today about a second at most);
* at a quarter of that size, its traced memory peak stays under MEMORY_BOUND (tracing costs time; the
  register-file runaway took 2 GB at the issue's size, about 125 MB at a quarter: quadratic memory shows
  there as well);
* from a sixteenth of that size to a quarter (more where that is too fast to time), the command's CPU time
  grows at most GROWTH times (linear: 4; quadratic: 16; a factor of 4 in size, not 2, keeps the two far
  enough apart that a neighbour's load on a 2-core CI box cannot push a linear reader past the bound, as
  it once did at 2.7 for a size doubled). Each size is timed once; a growth past GROWTH is measured again
  (each size twice, the fastest kept, up to ATTEMPTS times), so that a neighbour's load does not make a
  linear file look quadratic.
"""
from __future__ import annotations

import contextlib
import gc
import io
import time
import tracemalloc

import pytest

import ptx_runaways
from solver.cli.main import main

TIME_BOUND = 10.0            # seconds, wall clock, at the issue's size
MEMORY_BOUND = 50 << 20      # bytes traced at the peak, at a quarter of the issue's size
MEMORY_FRACTION = 4          # ... the size divided by this
GROWTH = 8.0                 # CPU time of 4n over n: between linear (4) and quadratic (16)
LEAST_TIME = 0.05            # seconds: a smaller measurement is noise, its size is doubled until it is not
ATTEMPTS = 4                 # measurements of n and 4n before a growth past GROWTH fails (a parallel run is noisy)


def run_reader(path) -> tuple:
    """(exit status, stdout, stderr) of `layoutproof ptx descriptors PATH --json`."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["ptx", "descriptors", str(path), "--json"])
    return rc, out.getvalue(), err.getvalue()


def cpu_seconds(path) -> float:
    """CPU time of one read, the cyclic garbage collector off while it runs: its passes walk every object
    the whole test process holds, so their cost grows with what other tests left behind, not with the
    file (the growth measured here is the reader's)."""
    gc.collect()
    gc.disable()
    try:
        started = time.process_time()
        run_reader(path)
        return time.process_time() - started
    finally:
        gc.enable()


def fastest(path, tries: int = 2) -> float:
    return min(cpu_seconds(path) for _ in range(tries))


def issue_file(name, tmp_path):
    path = tmp_path / f"{name}.ptx"
    path.write_text(ptx_runaways.GENERATORS[name](ptx_runaways.ISSUE_SIZES[name]))
    return path


@pytest.mark.parametrize("name", sorted(ptx_runaways.GENERATORS))
def test_the_issue_size_runs_in_seconds(name, tmp_path):
    path = issue_file(name, tmp_path)
    started = time.perf_counter()
    rc, _, err = run_reader(path)
    elapsed = time.perf_counter() - started
    assert rc in (0, 1, 2) and (rc == 2) == bool(err), err      # never an internal error
    assert elapsed < TIME_BOUND, f"{name}: {elapsed:.1f} s"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(ptx_runaways.GENERATORS))
def test_a_quarter_of_the_issue_size_runs_in_bounded_memory(name, tmp_path):
    path = tmp_path / f"{name}.ptx"
    path.write_text(ptx_runaways.GENERATORS[name](max(1, ptx_runaways.ISSUE_SIZES[name] // MEMORY_FRACTION)))
    tracemalloc.start()
    try:
        run_reader(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < MEMORY_BOUND, f"{name}: {peak >> 20} MB traced"


@pytest.mark.parametrize("name", sorted(ptx_runaways.GENERATORS))
def test_four_times_the_input_takes_at_most_about_four_times_the_time(name, tmp_path):
    generate, n = ptx_runaways.GENERATORS[name], max(1, ptx_runaways.ISSUE_SIZES[name] // 16)
    small, large = tmp_path / "n.ptx", tmp_path / "4n.ptx"
    while True:
        small.write_text(generate(n))
        base = fastest(small, tries=1)
        if base >= LEAST_TIME or n >= 16 * ptx_runaways.ISSUE_SIZES[name]:
            break
        n *= 2
    large.write_text(generate(4 * n))
    grown = fastest(large, tries=1)                   # one measure each first: most files pass at once
    for _ in range(ATTEMPTS):                         # a busy machine can slow one measure: measure again
        if grown <= GROWTH * max(base, LEAST_TIME):
            break
        base, grown = fastest(small), fastest(large)
    assert grown <= GROWTH * max(base, LEAST_TIME), f"{name}: n={n} {base:.3f} s, 4n: {grown:.3f} s"
