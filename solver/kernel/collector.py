"""Python's cyclic garbage collector while the kernel reader builds and evaluates a module.

Each pass of the collector walks every object alive that it tracks. A PTX module read is hundreds of
thousands of Statements and Instructions (a 20 MB file: 430,000 statements), and every function's results
stay alive while the next is evaluated; the passes the allocations trigger then walk all of it, again and
again: with the collector on throughout, the 20 MB file of bench_kernel_jobs.py read in 4.8 s against
3.4 s, and was evaluated in 68 s against 53 s (BENCHMARKS.md, issue 26 continued (3)). The trees the reader
builds hold no cycle, so nothing is left for the collector there; what an evaluation makes may (closures,
caught exceptions), so the collector is run over the young generations after it: only what that
evaluation made is walked, once.
"""
from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def paused(collect_after: bool = False):
    """The collector off inside, as it was after; collect_after: then a pass over the young generations
    (what was made inside and is not yet in the oldest), where the collector was on."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
            if collect_after:
                gc.collect(1)
