"""The fast paths and the one switch that turns them off.

spec/ is the plain definition. Where a definition is too slow for the sizes users give (every element of a
recipe, every address of a box), a faster function computes the same thing another way (by rows, by classes
of rows, by a period's table). Each such function is registered here against the definition it stands in
for, with `@fast_version_of(reference)`, and the tests check each equal to its reference
(tests/test_fast_paths.py and the tests named after each).

A fast path inlines the definitions it was written against. A test that changes a definition (a mutant,
tests/mutants.py) must see its change everywhere, so it turns every fast path off with `references_only()`
(or ENABLED = False under monkeypatch), and the callers then run the references. Nothing else decides
which path runs: no code inspects another function's code.
"""
from __future__ import annotations

import contextlib

ENABLED = True            # False: every caller runs the reference definitions (the mutation tests)
_FAST: dict = {}          # reference function -> its registered fast version


def enabled() -> bool:
    """Whether fast paths may run (a caller that has one checks this, and runs the reference if not)."""
    return ENABLED


def fast_version_of(reference):
    """Decorator: register the decorated function as computing what `reference` computes."""
    def register(fast):
        _FAST[reference] = fast
        fast.reference = reference
        return fast
    return register


def fastest(reference):
    """The function to call for `reference`: its registered fast version while fast paths are enabled."""
    return _FAST.get(reference, reference) if ENABLED else reference


def registered() -> dict:
    """{reference: fast version}, for the equality tests."""
    return dict(_FAST)


@contextlib.contextmanager
def references_only():
    """Run the block with every fast path off."""
    global ENABLED
    was, ENABLED = ENABLED, False
    try:
        yield
    finally:
        ENABLED = was
