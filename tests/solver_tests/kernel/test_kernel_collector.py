"""solver/kernel/collector.py: the cyclic collector is off while the reader builds and evaluates, as it was
after, and a cycle made during an evaluation is still freed when it ends."""
import gc
import weakref

from repo_paths import TESTS
from solver.kernel import analysis, collector


class _Node:
    pass


def test_the_collector_is_paused_inside_and_as_it_was_after():
    assert gc.isenabled()
    with collector.paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with collector.paused(collect_after=True):
            assert not gc.isenabled()
        assert not gc.isenabled()                 # off before: off after
    finally:
        gc.enable()


def test_a_cycle_made_inside_is_freed_after():
    with collector.paused(collect_after=True):
        node = _Node()
        node.self = node                          # a cycle: reference counting alone never frees it
        alive = weakref.ref(node)
        del node
        assert alive() is not None                # (the collector is off)
    assert alive() is None


def test_analyse_leaves_the_collector_on():
    text = (TESTS / "fixtures" / "ptx" / "handwritten_wgmma.ptx").read_text()
    assert analysis.analyse(text).sites and gc.isenabled()
