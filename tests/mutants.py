"""Applying a mutant without touching the tree: one function's source, changed by a text replacement,
compiled and swapped into the live function object (its __code__) under pytest's monkeypatch, so every
caller sees the change (modules that imported the function by name, registries that hold it) and the
function is restored when the test ends. Module constants are mutated with monkeypatch.setattr/setitem.
"""
from __future__ import annotations

import __future__
import ast
import inspect
import textwrap


def mutated_code(function, old: str, new: str):
    """The code object of `function` with the one occurrence of `old` in its source replaced by `new`."""
    source = textwrap.dedent(inspect.getsource(function))
    if source.count(old) != 1:
        raise AssertionError(f"{function.__qualname__}: {old!r} occurs {source.count(old)} times, expected once")
    tree = ast.parse(source.replace(old, new))
    definition = tree.body[0]
    if not isinstance(definition, (ast.FunctionDef, ast.AsyncFunctionDef)):
        raise AssertionError(f"{function.__qualname__} is not a function")
    definition.decorator_list = []            # re-running a decorator would register the function again
    ast.increment_lineno(tree, function.__code__.co_firstlineno - 1)
    code = compile(tree, inspect.getsourcefile(function), "exec",
                   flags=__future__.annotations.compiler_flag, dont_inherit=True)
    namespace = dict(function.__globals__)
    exec(code, namespace)
    replacement = namespace[definition.name].__code__
    if replacement.co_freevars != function.__code__.co_freevars:
        raise AssertionError(f"{function.__qualname__}: a closure cannot be mutated this way")
    return replacement


def swap(monkeypatch, function, old: str, new: str) -> None:
    """Mutate `function` in place (restored by monkeypatch at the end of the test), with every fast path
    off (spec.fast: a fast path inlines the definitions it was written against, so a mutant of one of them
    is seen only by the references)."""
    from spec import fast
    function = inspect.unwrap(function)
    monkeypatch.setattr(fast, "ENABLED", False)
    monkeypatch.setattr(function, "__code__", mutated_code(function, old, new))
