"""`layoutproof rules [ID ...] [--subject S] [--where] [--json]`: the rule catalogue (docs/CLI.md `rules`).

The catalogue is spec.rules.all_rules(), nothing added. An id that was merged into another rule
resolves to its successor (spec.rules.resolve). For rules asked for by id, the document also names the
properties that prove something about the rule (Property.rules) and, in a source checkout, the tests
that mention its id."""
from __future__ import annotations

import ast
import os
import re

from spec import rules as catalogue
from spec.rule import SpecError

from solver.cli.catalogue import summary
from solver.cli import render
from solver.cli.args import EXIT_OK, add_command

# tests/ next to the packages: present in a source checkout, absent in an installed wheel.
REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TESTS = os.path.join(REPOSITORY, "tests")


def resolve(rule_id: str):
    """The rule with this id or the successor of a merged id; an unknown id is malformed input."""
    try:
        return catalogue.resolve(rule_id)
    except KeyError:
        raise SpecError("rule", rule_id, "no rule has this id (layoutproof rules lists them)") from None


def properties_naming(rule_ids: set, properties: list) -> list:
    """Ids of the properties whose `rules` name one of rule_ids."""
    return [p.id for p in properties if rule_ids & set(p.rules)]


def _enclosing_tests(source: str) -> dict:
    """line number -> name of the top-level test function (or test class) whose body holds it."""
    enclosing = {}
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name.lower().startswith("test"):
            for line in range(node.lineno, node.end_lineno + 1):
                enclosing[line] = node.name
    return enclosing


def _python_files(folder: str) -> list:
    """The .py files below `folder` (the tests are filed in area folders), as '/'-joined paths relative to
    it, sorted; the data folders (fixtures, recorded evidence) are not walked."""
    found = []
    for directory, subdirs, names in os.walk(folder):
        subdirs[:] = sorted(d for d in subdirs if d not in ("fixtures", "hardware", "hostile", "__pycache__"))
        relative = os.path.relpath(directory, folder)
        found += [name if relative == "." else "/".join(relative.split(os.sep) + [name])
                  for name in names if name.endswith(".py")]
    return sorted(found)


def tests_mentioning(rule_ids: set, tests_folder: str = TESTS) -> list:
    """The tests whose source holds one of rule_ids as a quoted string: 'tests/<file>.py::<test>' for a
    mention inside a test function, 'tests/<file>.py:<line>' for the first of a block of mentions
    outside one (a table the tests share); [] outside a source checkout."""
    if not os.path.isdir(tests_folder):
        return []
    quoted = re.compile("([\"'])(?:" + "|".join(re.escape(i) for i in sorted(rule_ids)) + ")\\1")
    found = []
    for name in _python_files(tests_folder):
        with open(os.path.join(tests_folder, name), encoding="utf-8", errors="replace") as handle:
            source = handle.read()
        if not quoted.search(source):
            continue
        enclosing = _enclosing_tests(source)
        where = f"{os.path.basename(tests_folder)}/{name}"
        previous_hit = None
        for number, line in enumerate(source.split("\n"), 1):
            if not quoted.search(line):
                continue
            if number in enclosing:
                place = f"{where}::{enclosing[number]}"
            elif previous_hit is not None and previous_hit not in enclosing and number - previous_hit <= 3:
                place = None                    # the same table as the mention just above
            else:
                place = f"{where}:{number}"
            previous_hit = number
            if place and place not in found:
                found.append(place)
    return found


def named_rule_document(rule_id: str, rule, properties: list) -> dict:
    """The rule `rule_id` resolves to, with the properties and tests that name it (or a merged old id)."""
    document = rule.as_json()
    if rule.id != rule_id:
        document["requested_as"] = rule_id
    ids = {rule.id} | {old for old, new in catalogue.aliases().items() if new == rule.id}
    document["properties"] = properties_naming(ids, properties)
    document["tests"] = tests_mentioning(ids)
    return document


def subjects() -> list:
    """Every subject a rule's check looks at, in catalogue order, then "definition"."""
    from spec.rule import DEFINITION
    return list(dict.fromkeys(s for r in catalogue.all_rules() for s in r.subjects)) + [DEFINITION]


def check_subject(subject) -> None:
    """--subject names one of the catalogue's subjects; anything else is malformed input (exit 2)."""
    if subject is None:
        return
    known = subjects()
    if subject not in known:
        raise SpecError("subject", subject, "unknown subject; one of: " + " ".join(known))


def run(args) -> int:
    check_subject(args.subject)
    if args.ids:
        wanted = [(rule_id, resolve(rule_id)) for rule_id in args.ids]   # unknown ids fail before Z3 loads
        wanted = [(rule_id, r) for rule_id, r in wanted if not args.subject or r.is_about(args.subject)]
        from solver.prove.catalogue import all_properties
        properties = all_properties()
        documents = [named_rule_document(rule_id, r, properties) for rule_id, r in wanted]
    else:
        documents = [r.as_json() for r in catalogue.all_rules() if not args.subject or r.is_about(args.subject)]
    render.emit(args, {"rules": documents}, render.rules_table(documents, where=args.where))
    return EXIT_OK


def register(commands) -> None:
    p = add_command(
        commands, "rules", run,
        examples=['layoutproof rules desc.sm90.layout --where'],
        help=summary("rules"),
        description="Every rule, or the rules named: id, source, statement, evidence, where it is defined. "
                    "A merged id resolves to its successor; naming a rule also lists the properties and "
                    "tests that name it.")
    p.add_argument("ids", nargs="*", metavar="ID", help="rule ids (default: the whole catalogue)")
    p.add_argument("--subject", default=None,
                   help="only rules whose check looks at this subject (descriptor, operand, ...)")
    p.add_argument("--where", action="store_true", help="also print the file:line that defines each rule")
