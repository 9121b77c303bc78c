"""The import structure of spec/ and solver/, read from the source (ast; module-level and function-level
imports alike): no import cycle among their modules; spec/ (the executable specification) never imports
z3 or solver; the Z3 models in solver/model never import spec/ (they are written independently and
compared with spec/ by the tests)."""
from __future__ import annotations

import ast
from repo_paths import ROOT_DIR  # noqa: E402  (tests/repo_paths.py)
import os

import networkx as nx
import pytest

ROOT = ROOT_DIR
PACKAGES = ("spec", "solver")


def _module_name(path: str) -> str:
    parts = os.path.relpath(path, ROOT)[:-len(".py")].split(os.sep)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _sources() -> dict:
    """module name -> path, for every .py file of the packages."""
    found = {}
    for package in PACKAGES:
        for folder, _, files in os.walk(os.path.join(ROOT, package)):
            for name in files:
                if name.endswith(".py"):
                    path = os.path.join(folder, name)
                    found[_module_name(path)] = path
    return found


def _imported(module: str, path: str, known: set) -> set:
    """Every module `module` imports anywhere in its file (absolute names; `from P import N` names the
    module P.N when that is one, else P)."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                names.add(candidate if candidate in known else base)
    return names


def import_graph() -> nx.DiGraph:
    """Directed graph of every import (edges to outside modules too: z3, networkx, ...)."""
    sources = _sources()
    graph = nx.DiGraph()
    for module, path in sources.items():
        graph.add_node(module)
        for target in _imported(module, path, set(sources)):
            graph.add_edge(module, target)
    return graph


@pytest.fixture(scope="module")
def graph() -> nx.DiGraph:
    return import_graph()


def _ours(name: str) -> bool:
    return name.split(".")[0] in PACKAGES


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def test_the_graph_sees_the_known_imports(graph):
    """The reader works: a module-level and a function-level import are found."""
    assert graph.has_edge("solver.prove.catalogue", "solver.prove.tma")
    assert graph.has_edge("solver.prove.prover", "solver.prove.property")
    assert graph.has_edge("solver.fuzz.engine", "solver.fuzz.outcome")
    assert len([n for n in graph if _ours(n)]) > 60


def test_no_import_cycle_among_spec_and_solver_modules(graph):
    ours = graph.subgraph(n for n in graph if _ours(n))
    cycles = sorted(sorted(c) for c in nx.strongly_connected_components(ours) if len(c) > 1)
    cycles += [[n] for n in ours if ours.has_edge(n, n)]
    assert cycles == [], cycles


def test_spec_imports_neither_z3_nor_solver(graph):
    bad = [(m, t) for m, t in graph.edges if _under(m, "spec")
           and (_under(t, "z3") or _under(t, "solver") or _under(t, "layoutproof"))]
    assert bad == []


def test_the_z3_models_do_not_import_spec(graph):
    """...but for spec.fast, the one switch of the fast paths, which holds no definition (issue 30)."""
    bad = [(m, t) for m, t in graph.edges if _under(m, "solver.model") and _under(t, "spec") and t != "spec.fast"]
    assert bad == []


def test_only_the_command_line_imports_the_command_line(graph):
    """solver/cli is a shell: what other programs share with it (the parser, argument types, progress)
    lives in solver/shell.py (issue 30), so nothing under solver/ but solver/cli imports solver.cli."""
    bad = [(m, t) for m, t in graph.edges if _under(t, "solver.cli") and not _under(m, "solver.cli")]
    assert bad == []


def test_no_product_code_inspects_another_functions_code():
    """Which path runs is spec.fast's switch (tests/mutants.py turns it off), never a comparison of code
    objects (issue 30)."""
    found = []
    for name, path in _sources().items():
        with open(path, encoding="utf-8") as handle:
            if "__code__" in handle.read():
                found.append(name)
    assert found == []


def _constant_tables(package: str) -> dict:
    """{the table, keys folded (case, underscores): [module:line, ...]} of every dict literal of three or
    more constant keys and values in the package."""
    found = {}
    for name, path in _sources().items():
        if not _under(name, package):
            continue
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
        for node in ast.walk(tree):
            if (isinstance(node, ast.Dict) and len(node.keys) >= 3
                    and all(isinstance(k, ast.Constant) for k in node.keys)
                    and all(isinstance(v, ast.Constant) for v in node.values)):
                table = tuple(sorted((str(k.value).lower().replace("_", ""), repr(v.value))
                                     for k, v in zip(node.keys, node.values)))
                found.setdefault(table, []).append(f"{name}:{node.lineno}")
    return found


@pytest.mark.parametrize("package", PACKAGES)
def test_one_table_per_fact_on_each_side(package):
    """The same table written in two modules of one side is one fact kept twice (issue 30: the row
    widths were in three places); spec and solver each keep their own, written apart."""
    twice = {table: places for table, places in _constant_tables(package).items()
             if len({place.rsplit(":", 1)[0] for place in places}) > 1}
    assert twice == {}


# Modules of solver/cli that are not commands: the printer itself, and the argument readers (whose *_text
# functions read text in, never write it out).
_NOT_COMMANDS = {"solver.cli.render", "solver.cli.args"}


def test_only_render_writes_a_commands_text():
    """Every command's human-readable text is built in solver/cli/render.py, from the command's document
    (issue 30: cli/im2col and cli/tmem_plan built their own). A command module defines no module-level
    *_text function."""
    found = []
    for name, path in _sources().items():
        if not _under(name, "solver.cli") or name in _NOT_COMMANDS:
            continue
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
        found += [f"{name}.{node.name}" for node in tree.body       # (a closure that calls render is fine)
                  if isinstance(node, ast.FunctionDef) and node.name.rstrip("_").endswith("text")]
    assert found == []
