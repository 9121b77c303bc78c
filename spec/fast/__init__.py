"""The fast paths, and the one switch that turns them off.

spec/ is the plain definition. Where a definition is too slow for the sizes users give (every element of a
recipe, every address of a box), a faster function computes the same thing another way (by rows, by classes
of rows, by a period's table). Those functions live here, one module per topic module, named after it
(spec/fast/tma_swizzle.py for spec/tma/swizzle.py, spec/fast/cases_desc_case.py for spec/cases/desc_case.py,
...), each registered against the definition it stands in for with `@fast_version_of(reference)`. The
topic module keeps the definition and its public name; a public name with a fast path dispatches,
`fastest(reference)(...)`. The tests check each fast version equal to its reference (tests/spec_tests/fast/test_fast_paths.py
and the tests named after each; tests/spec_tests/fast/test_fast_registry.py checks every registered one is compared).

Imports go one way: a fast module imports its topic module (and this package); a topic module imports
this package only. So the fast modules are imported here, when first asked for: `fastest(reference)`
imports the fast module named after the reference's module the first time it is asked about that module,
and `registered()` imports every module of the package. Registration does not depend on what the caller
imported (a program that imports spec.tma.swizzle alone gets its fast path), and a command that never
reaches a topic does not import that topic's fast module (or the topic).

A fast path inlines the definitions it was written against. A test that changes a definition (a mutant,
tests/mutants.py) must see its change everywhere, so it turns every fast path off with `references_only()`
(or ENABLED = False under monkeypatch), and the callers then run the references. Nothing else decides
which path runs: no code inspects another function's code.

The solver side keeps its fast paths the same way, in solver/fast/ (one module per solver topic module,
named after it below `solver.`: solver/fast/synth_descriptor.py for solver/synth/descriptor.py), registered
here with the same decorator: one registry, one switch. `fastest` finds a reference's fast module by the
reference's module name alone (spec.X.Y -> spec.fast.X_Y, solver.X.Y -> solver.fast.X_Y, SIDES), imported
by name at call time (importlib; spec imports nothing of solver), so registration does not depend on import
order on either side; `registered()` imports every module of both packages.

A fast version may also be registered from outside these packages, where it is defined: it is registered
when its module is imported, which happens before its reference can be called.
"""
from __future__ import annotations

import contextlib
import importlib
import pkgutil

ENABLED = True            # False: every caller runs the reference definitions (the mutation tests)
SIDES = ("spec", "solver")  # the packages whose topic modules have fast paths, each in its package <side>.fast
_FAST: dict = {}          # reference function -> its registered fast version
_ASKED: set = set()       # the topic modules whose fast module fastest has looked for
_MODULES: dict = {}       # side -> the names of the modules of its package <side>.fast, once listed


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


def fast_module_name(topic: str) -> str:
    """The module of its side's fast package that holds the fast paths of topic module `topic`: its path
    below its side, dots as underscores (spec.tma.swizzle -> tma_swizzle, spec.cases.desc_case ->
    cases_desc_case, solver.synth.descriptor -> synth_descriptor, in solver.fast)."""
    return topic.partition(".")[2].replace(".", "_")


def modules(side: str = "spec") -> list:
    """The names of the modules of `side`'s fast package (this one for spec, solver.fast for solver): one
    per topic module with fast paths; none where that package is not there."""
    if side not in _MODULES:
        if side == "spec":
            path = __path__
        else:
            try:
                path = importlib.import_module(f"{side}.fast").__path__     # (by name: spec imports no solver)
            except ModuleNotFoundError as error:
                if error.name not in (side, f"{side}.fast"):
                    raise
                path = []
        _MODULES[side] = sorted(m.name for m in pkgutil.iter_modules(path))
    return list(_MODULES[side])


def _load(topic) -> None:
    """Import the fast module of `topic` (a module name), once; nothing when the topic has none."""
    _ASKED.add(topic)
    side = topic.partition(".")[0] if isinstance(topic, str) else None
    if side in SIDES and fast_module_name(topic) in modules(side):
        importlib.import_module(f"{side}.fast.{fast_module_name(topic)}")


def fastest(reference):
    """The function to call for `reference`: its registered fast version while fast paths are enabled."""
    if not ENABLED:
        return reference
    found = _FAST.get(reference)
    if found is None:
        topic = getattr(reference, "__module__", None)
        if topic in _ASKED:
            return reference
        _load(topic)
        found = _FAST.get(reference, reference)
    return found


def registered() -> dict:
    """{reference: fast version}, every module of both fast packages imported first (for the equality tests)."""
    for side in SIDES:
        for name in modules(side):
            importlib.import_module(f"{side}.fast.{name}")
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
