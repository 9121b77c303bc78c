"""Everything the CLI prints: the human-readable text of each command (tables, lists), built from the
document the command computed, and `emit`, which prints that document as JSON or as text.

Kept apart from the semantics (spec/, solver/) and from the argument handling (the command modules).
"""
from __future__ import annotations

import json
import re
import sys
import textwrap

from spec.mma import descriptor as desc_mod
from spec.tma import im2col as spec_im2col
from spec.tma import swizzle as spec_tma_swizzle
from spec.tmem import ld_st as spec_ld_st
from spec.mma import readmap
from spec.rule import one_line


class JSONText:
    """A value of a document already written as JSON text (exactly what json.dumps would write for it),
    for a long list that is quicker to write directly; `emit` puts it in place."""

    def __init__(self, text: str):
        self.text = text


def int_rows(rows) -> JSONText:
    """json.dumps(rows) for a list of lists of ints (str of an int is its JSON), written a row at a time:
    the JSON encoder takes longer on 64K addresses than computing them."""
    return JSONText("[" + ", ".join("[" + ", ".join(map(str, row)) + "]" for row in rows) + "]")


def dumps(document: dict) -> str:
    """json.dumps(document), where top-level values may be JSONText (json.dumps's own separators)."""
    if not isinstance(document, dict) or not any(isinstance(value, JSONText) for value in document.values()):
        return json.dumps(document)
    if not all(isinstance(key, str) for key in document):
        raise TypeError("a document with JSONText values has string keys only")
    return "{" + ", ".join(json.dumps(key) + ": " + (value.text if isinstance(value, JSONText) else json.dumps(value))
                           for key, value in document.items()) + "}"


def json_text(args, document) -> str:
    """The document as --json prints it: one line, or indented with --pretty."""
    if getattr(args, "pretty", False):
        return json.dumps(json.loads(dumps(document)), indent=2)
    return dumps(document)


def emit(args, document: dict, text) -> None:
    """With --json the document (one JSON document, one line; indented with --pretty), else the
    human-readable text (a string, or a function that makes it, so that --json does not pay for a long
    text)."""
    if args.json:
        sys.stdout.write(json_text(args, document) + "\n")      # one write: json.dump makes one per token
    else:
        sys.stdout.write((text() if callable(text) else text).rstrip("\n") + "\n")


def _table(header: list, rows: list) -> str:
    widths = [max(len(str(c)) for c in column) for column in zip(header, *rows)]
    line = lambda cells: "  ".join(str(c).ljust(w) for c, w in zip(cells, widths)).rstrip()
    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in rows])


def _assignments(named: dict) -> str:
    """{'K': 0, 'MN': 64} -> 'K=0 MN=64' (never a Python dict on the screen)."""
    return " ".join(f"{name}={value}" for name, value in named.items())


def violations_text(found: list) -> str:
    if not found:
        return "violations: none"
    return "violations:\n" + "\n".join(f"  {v['rule']}: {v['message']} [{v['source']}]" for v in found)


def descriptor_table(d: desc_mod.Descriptor, found: list) -> str:
    fields = desc_mod.SM90_FIELDS if d.arch == "sm90" else desc_mod.SM100_FIELDS
    shown = {"start_address": d.start_address, "leading_byte_offset": d.leading_byte_offset,
             "stride_byte_offset": d.stride_byte_offset, "base_offset": d.base_offset,
             "swizzle": d.swizzle, "lbo_mode": d.lbo_mode, "fixed_0b001": None}
    rows = []
    for f in fields:
        raw = f.get(d.raw)
        value = shown.get(f.name)
        meaning = f"{value} bytes" if f.name in ("start_address", "leading_byte_offset",
                                                 "stride_byte_offset") else value
        if f.name == "leading_byte_offset" and d.lbo_mode == "absolute":
            meaning = f"{value} (absolute address of the second chunk)"
        if f.name == "fixed_0b001":
            meaning = "ok" if raw == desc_mod.SM100_FIXED_VALUE else "WRONG (must be 0b001)"
        rows.append([f.name, f"[{f.lo},{f.lo + f.width})", raw, meaning])
    head = f"{d.arch} shared-memory descriptor {d.hex}"
    return "\n".join([head, _table(["field", "bits", "raw", "value"], rows), violations_text(found)])


def address_table(op: readmap.Operand, addresses: list, found: list, full: bool = False) -> str:
    """Rows are MN indices. By default one column per 16-byte chunk of K (K-major) or per K (MN-major),
    showing the address of the chunk's first element; --full shows every element."""
    if full or op.major == "MN":
        columns = list(range(op.k))
    else:
        step = op.elements_per_chunk
        columns = list(range(0, op.k, step))
    header = ["mn\\k"] + [str(k) for k in columns]
    rows = [[str(i)] + [f"{row[k]:#x}" for k in columns] for i, row in enumerate(addresses)]
    head = (f"{op.arch} {op.major}-major {op.dtype.name} (kind::{op.kind}) MN={op.mn} K={op.k}, "
            f"descriptor {op.desc.hex}: swizzle {op.desc.swizzle}, start {op.desc.start_address:#x}, "
            f"LBO {op.desc.leading_byte_offset}, SBO {op.desc.stride_byte_offset}, "
            f"base offset {op.desc.base_offset}")
    note = "" if full or op.major == "MN" else \
        f"(one column per 16-byte chunk: {op.elements_per_chunk} elements; --full for every element)"
    return "\n".join(x for x in [head, note, _table(header, rows), violations_text(found)] if x)


def chunk_map(op: readmap.Operand, addresses: list, max_lines: int = 64) -> str:
    """A picture of shared memory: one row per 128-byte line touched, one cell per 16-byte chunk,
    naming the operand chunk read from it (K-major: 'mn:kchunk'; MN-major: 'mnchunk:k')."""
    per_chunk = op.elements_per_chunk
    cells = {}
    for mn, row in enumerate(addresses):
        for k, address in enumerate(row):
            if op.major == "K" and k % per_chunk == 0:
                cells.setdefault(address // 16, f"{mn}:{k // per_chunk}")
            elif op.major == "MN" and mn % per_chunk == 0:
                cells.setdefault(address // 16, f"{mn // per_chunk}:{k}")
    lines = sorted({slot // 8 for slot in cells})
    legend = "mn:kchunk" if op.major == "K" else "mnchunk:k"
    rows = [[f"{line * 128:#07x}"] + [cells.get(line * 8 + c, ".") for c in range(8)]
            for line in lines[:max_lines]]
    header = ["line"] + [f"+{16 * c}" for c in range(8)]
    more = f"\n... {len(lines) - max_lines} more lines" if len(lines) > max_lines else ""
    return f"shared memory, 16-byte chunks ({legend} read from each):\n" + _table(header, rows) + more


def if_broken_text(per_arch: dict) -> str:
    """'refused on sm100, sm103; unknown on sm90': the outcomes of breaking a rule, arches grouped."""
    grouped = {}
    for arch, found in per_arch.items():
        grouped.setdefault(found["outcome"], []).append(arch)
    return "; ".join(f"{outcome} on {', '.join(arches)}" for outcome, arches in grouped.items())


def rules_table(documents: list, where: bool = False) -> str:
    """One block per rule (its JSON document): id, what decided it, who enforces it, its source, the
    statement wrapped; with `where`, and for every rule asked for by id, the file:line that defines it;
    for rules asked for by id, the properties and tests that name it."""
    blocks = []
    for r in documents:
        if r.get("subjects"):
            enforcer = "enforced by " + r["enforced_by"]
            if r.get("not_enforced_on"):
                enforcer += " (not on " + ", ".join(r["not_enforced_on"]) + ")"
            tags = f"constraint, {r['evidence']}; {enforcer}"
        else:
            tags = f"definition, {r['evidence']}"
        lines = [f"{r['id']}  [{tags}]  {r['source']}"]
        if r.get("requested_as"):
            lines.append(f"    (asked for as {r['requested_as']}, which was merged into {r['id']})")
        lines.append(textwrap.fill(r["statement"], width=100, initial_indent="    ", subsequent_indent="    "))
        if "if_broken" in r and "properties" in r:      # a constraint asked for by id: what breaking it does
            lines.append("    if broken: " + if_broken_text(r["if_broken"]))
        if where or "properties" in r:         # --where, or a rule asked for by id
            lines.append(f"    defined in {r['defined_in']}")
        for key, label in (("properties", "properties"), ("tests", "tests")):
            if key in r:
                lines.append(textwrap.fill(f"{label}: " + (", ".join(r[key]) or "none"), width=100,
                                           initial_indent="    ", subsequent_indent="        "))
        blocks.append("\n".join(lines))
    return "\n".join(blocks) + f"\n{len(documents)} rule{'' if len(documents) == 1 else 's'}"


def property_list(properties: list) -> str:
    rows = [[p.id, p.expected, p.domain] for p in properties]
    return _table(["id", "expected", "range"], rows) + f"\n{len(properties)} properties"


def prove_table(results: list, wall: float = None) -> str:
    rows = []
    for r in results:
        mark = "" if r.as_expected else "  <- expected " + r.property.expected
        detail = ""
        if r.counterexample:
            detail = _assignments(r.counterexample)
        if r.reason:
            detail = (detail + "; " if detail else "") + r.reason
        rows.append([r.property.id, r.status + mark, f"{r.seconds:.2f}", detail[:90]])
    matched = sum(r.as_expected for r in results)
    total = sum(r.seconds for r in results)
    counts = {s: sum(r.status == s for r in results) for s in ("proved", "refuted", "unknown")}
    summary = (f"{len(results)} properties: {counts['proved']} proved, {counts['refuted']} refuted, "
               f"{counts['unknown']} unknown; {matched} as expected; {total:.1f} s"
               + (f" of proving, {wall:.1f} s wall" if wall is not None else ""))
    return _table(["property", "status", "seconds", "counterexample / reason"], rows) + "\n" + summary


def layout_proof_text(doc: dict, triton: bool = False) -> str:
    """`prove --layout`: the verdict and the statement, the range, the engine, and the counterexample replayed by
    spec."""
    checked = f"; cross-checked by {', '.join(doc['cross_checked_by'])}" if doc["cross_checked_by"] else ""
    # the verdict first (issue 29: a refuted proof must not open with the claim it refutes)
    lines = [f"{doc['status']}: {doc['id']}: {doc['statement']}", f"  over {doc['domain']}",
             f"  by {doc['engine']}{checked} ({doc['seconds'] * 1000:.1f} ms)"]
    if doc.get("reason"):
        lines.append(f"  {doc['reason']}")
    cex = doc.get("counterexample")
    if cex:
        if "params" in cex:
            lines.append("  with " + _assignments(cex["params"]))
        if "read_from" in cex:
            e = cex["element"]
            lines.append(f"  k-step {cex['k_step']} (descriptor {cex['descriptor']}): element (mn={e['mn']}, "
                         f"k={e['k']}) is read from {cex['read_from']:#x}; the layout holds "
                         f"{_crd(cex['coordinate'])} at {cex['held_at']:#x}")
            lines += [f"  breaks {r}" for r in cex.get("rules_broken", [])]
        elif "written_at" in cex:
            lines.append(f"  box element {_crd(cex['element'])} (index {cex['index']}) is written at "
                         f"{cex['written_at']:#x}; the layout holds it at {cex['held_at']:#x}")
        elif "indices" in cex:
            (c1, c2), (a1, a2) = cex["coordinates"], cex["addresses"]
            lines.append(f"  coordinates {_crd(c1)} and {_crd(c2)} (indices {cex['indices'][0]}, "
                         f"{cex['indices'][1]}) both at address {a1:#x}")
        elif "lines" in cex:
            # the two bytes of the slice that lie in different lines (they may be two ends of one element
            # wider than the line), each with the element that holds it
            (a1, a2), (b1, b2) = cex["addresses"], cex.get("bytes", cex["addresses"])
            lines.append(f"  row {cex['row']}: byte {b1:#x} of k={cex['k'][0]} (at {a1:#x}) is in line "
                         f"{cex['lines'][0]}, byte {b2:#x} of k={cex['k'][1]} (at {a2:#x}) in line {cex['lines'][1]}")
        elif "addresses" in cex:
            lines.append(f"  coordinate {_crd(cex['coordinate'])} (index {cex['index']}): "
                         f"{cex['addresses'][0]:#x} vs {cex['addresses'][1]:#x}")
        elif "address" in cex:
            lines.append(f"  coordinate {_crd(cex['coordinate'])} (index {cex['index']}) at "
                         f"{cex['address']:#x}, not a slot of [{cex['range'][0]:#x}, {cex['range'][1]:#x})")
        elif "slots" in cex:
            unused = f"; {cex['unused_address']:#x} is never used" if "unused_address" in cex else ""
            lines.append(f"  {cex['elements']} elements for {cex['slots']} slots{unused}")
        elif "sizes" in cex:
            lines.append(f"  sizes differ: {cex['sizes'][0]} vs {cex['sizes'][1]}")
        lines.append("  (replayed by spec)")
    bases = doc.get("bases")
    if bases is not None:
        def basis(b):
            return str(b[0]) if len(b) == 1 else "(" + ", ".join(map(str, b)) + ")"
        dims = "; ".join(f"{name}: [{', '.join(basis(b) for b in values)}]"
                         for name, values in bases["in_dims"].items())
        lines.append(f"linear over GF(2): offset {bases['offset']:#x}; bases {dims}")
        if triton:
            lines.append("as Triton's LinearLayout prints it" + (f" (its offset {bases['offset']:#x} is not part of "
                         "a Triton layout)" if bases["offset"] else "") + ":" + bases["triton"])
            if "offset_bases" in bases:
                lines.append("as Gluon's SharedLinearLayout (element offset -> coordinate): offset_bases="
                             + json.dumps(bases["offset_bases"], separators=(", ", ": ")))
            else:
                lines.append("no SharedLinearLayout view: the layout is not a bijection of [0, 2^bits) elements")
    return "\n".join(lines)


def _crd(value) -> str:
    return "(" + ",".join(_crd(v) for v in value) + ")" if isinstance(value, list) else str(value)


def synth_text(tile, outcome, violations: list, hint=None) -> str:
    head = (f"{tile.arch} {tile.major}-major {tile.dtype} MN={tile.mn} K={tile.k} from K offset "
            f"{tile.k_offset}, tile at {tile.start_address:#x}: {tile.layout.notation()}")
    if outcome.status != "found":
        return head + (f"\nhint: {hint}" if hint else "") + "\nno descriptor: " + outcome.reason
    d = outcome.descriptor
    lines = [head, descriptor_table(d, violations)]
    if outcome.ignored:
        lines.append("ignored by the hardware here (any value reads the same): " + ", ".join(outcome.ignored))
    for s in outcome.solutions[1:]:
        lines.append(f"also: {s['descriptor']} {_assignments(s['fields'])}")
    return "\n".join(lines)


def check_text(report: dict) -> str:
    if report["match"] and report["violations"]:       # the addresses agree, but no instruction reads so
        return (f"{report['descriptor']} reads every element where the tile has it, but the read breaks "
                f"{len(report['violations'])} rule{'' if len(report['violations']) == 1 else 's'}:\n"
                + violations_text(report["violations"]))
    if report["match"]:
        return f"{report['descriptor']} reads the tile: every element matches\n" + \
            violations_text(report["violations"])
    m = report["mismatch"]
    lines = [f"{report['descriptor']} does not read the tile: element (mn={m['mn']}, k={m['k']}) is at "
             f"{m['expected']:#x} but the descriptor reads {m['read']:#x}"]
    if report.get("fix"):
        lines.append("change: " + ", ".join(f"{k} {v['from']} -> {v['to']}" for k, v in report["fix"].items())
                     + f" (descriptor {report['suggested_descriptor']})")
    elif report.get("reason"):
        if report.get("hint"):
            lines.append(f"hint: {report['hint']}")
        lines.append(report["reason"])
    return "\n".join(lines)


def recipe_text(doc: dict) -> str:
    head = (f"{doc['arch']} {doc['major']}-major {doc['dtype']} tile {doc['mn']} x {doc['k_tile']} (K), "
            f"swizzle {doc['swizzle']}, at {doc['smem_address']:#x}")
    if doc["violations"]:
        return head + "\nrefused:\n" + "\n".join(f"  {v['rule']}: {v['message']} [{v['source']}]"
                                                  for v in doc["violations"])
    tma = doc["tma"]
    lines = [head, f"smem layout: {doc['layout']}",
             f"size {doc['size_bytes']} bytes, alignment {doc['alignment']} bytes",
             f"TMA: swizzle {tma['swizzle']}, box {tma['box'][0]} x {tma['box'][1]} ({tma['box_order']}), "
             f"{tma['box_bytes']} bytes, {len(tma['loads'])} load(s):"]
    lines.append(_table(["load", "box at", "smem address"],
                        [[str(n), _assignments(l["box_origin"]), f"{l['smem_address']:#x}"]
                         for n, l in enumerate(tma["loads"])]))
    rows = [[str(i["k_offset"]), i["descriptor"] or "-", (f"start {i['fields']['start_address']:#x} "
             f"LBO {i['fields']['leading_byte_offset']} SBO {i['fields']['stride_byte_offset']} "
             f"base offset {i['fields']['base_offset']}") if i["fields"] else i["reason"]]
            for i in doc["instructions"]]
    lines.append(_table(["k offset", "descriptor", "fields"], rows))
    lines.append("proof: " + _recipe_proof(doc["proof"]))
    idesc = doc.get("instr_desc")
    if idesc:
        lines.append(f"instruction descriptor: {idesc['word']} (tcgen05.mma kind::{idesc['kind']}, M={idesc['m']} "
                     f"N={idesc['n']}, cta_group::{idesc['cta_group']}, A {idesc['a_major']}-major, B "
                     f"{idesc['b_major']}-major" + (f", D {idesc['d_type']}" if idesc["d_type"] else "") + ")")
        lines += [f"  {v['rule']}: {v['message']} [{v['source']}]" for v in idesc["violations"]]
    if doc.get("mma"):
        lines += mma_reads_lines(doc["mma"])
    return "\n".join(lines)


def _short_registers(instruction: str) -> str:
    """An instruction with its register vector cut to its ends: {%d0, ..., %d63} (--json has it whole)."""
    return re.sub(r"\{(%\w+?)(\d+), [^}]*, (%\w+?\d+)\}", r"{\1\2, ..., \3}", instruction)


def mma_reads_lines(reads: dict) -> list:
    """The instruction, then each slice an instruction reads with its descriptor per k-step (recipe)."""
    lines = [f"instruction: {_short_registers(reads['instruction'])}"]
    if reads.get("instr_desc"):
        lines[-1] += f"  (%idesc = {reads['instr_desc']})"
    if reads["slices"]:
        lines.append(f"{reads['shape']} reads (A: one per warpgroup; B: one per instruction N):")
        rows = [[s["operand"], f"{s['rows'][0]}-{s['rows'][1]}", " ".join(s["descriptors"]),
                 f"proved ({s['proof']['elements']} elements)" if s["proof"]["status"] == "proved" else
                 _slice_failure(s["proof"])] for s in reads["slices"]]
        lines.append(_table(["operand", "rows", "descriptor per k-step", "check"], rows))
    lines += [f"note: {note}" for note in reads["notes"]]
    return lines


def _slice_failure(proof: dict) -> str:
    if "violations" in proof:
        return "breaks " + ", ".join(v["rule"] for v in proof["violations"])
    return _recipe_proof(proof)


def _recipe_proof(proof: dict) -> str:
    if proof["status"] == "proved":
        return f"proved ({proof['method']}, {proof['elements']} elements): {proof['statement']}"
    if "element" in proof:
        mn, k = proof["element"]
        return (f"refuted: element (mn={mn}, k={k}) is written at {proof['written']:#x} but read at "
                f"{proof['read']:#x}")
    return f"{proof['status']}: {proof.get('reason', '')}".rstrip(": ")


def placement_text(box, offsets: list, found: list) -> str:
    """One row per box row (dimension 0 along the row), addresses in hex."""
    head = (f"tiled box {'x'.join(map(str, box.dims))} of {box.element_bytes}-byte elements, swizzle "
            f"{box.swizzle}, destination {box.smem_address:#x}")
    if offsets is None:
        return "\n".join([head, "not placed: the box breaks the rules below", violations_text(found)])
    width = box.counts[0]
    rows = [[str(r)] + [f"{a:#x}" for a in offsets[r * width:(r + 1) * width]]
            for r in range(min(len(offsets) // width, 64))]
    total_rows = len(offsets) // width
    shown = rows
    more = f"\n... {total_rows - 64} more rows" if total_rows > 64 else ""
    return "\n".join([head, _table(["row"] + [str(i) for i in range(width)], shown) + more, violations_text(found)])


def tensormap_text(params, arch: str, report: dict) -> str:
    """`tma check`: what was checked, the verdict, then the violations and the warnings."""
    head = (f"{params.encode} tensor map, {params.data_type}, rank {params.rank}, swizzle {params.swizzle}, "
            f"interleave {params.interleave}, on {arch}")
    verdict = ("legal: yes (the encoder accepts these arguments)" if report["legal"]
               else "legal: no (the encoder refuses these arguments)")
    warnings = report["warnings"]
    warned = ("warnings: none" if not warnings else "warnings (not caught by the encoder):\n"
              + "\n".join(f"  {w['rule']}: {w['message']} [{w['source']}]" for w in warnings))
    return "\n".join([head, verdict, violations_text(report["violations"]), warned])


def coverage_text(document: dict) -> str:
    """`fuzz --coverage`: one table per target."""
    parts = []
    for target, entry in document["targets"].items():
        rows = []
        for r in entry["rules"]:
            if r["breakable"]:
                status = "alone"
            elif r["tied_to"]:
                status = "with " + ", ".join(t["id"] + f" ({t['why']})" for t in r.get("ties", []))
            else:
                status = r.get("why", "never")
            rows.append([r["id"], status])
        alone = sum(r["breakable"] for r in entry["rules"])
        parts.append(f"{target}: {alone} of {len(entry['rules'])} rules can be broken alone\n"
                     + _table(["rule", "breaks"], rows))
    return "\n\n".join(parts)


def fuzz_written_text(paths: list, cases: int) -> str:
    """`fuzz --out DIR`: what was written, a line each (the cases file with its count)."""
    return "\n".join(f"wrote {path}" + (f" ({cases} case{'' if cases == 1 else 's'})" if path.endswith(".jsonl") else "")
                     for path in paths)


def fuzz_disagreements_text(count: int) -> str:
    """fuzz's warning when Z3's solutions and spec's labels differ: a bug in one of them."""
    return f"fuzz: {count} Z3 solutions that spec labels otherwise (a model/spec disagreement; please report)"


def fuzz_differences_text(count: int, total: int, against: str) -> str:
    """`fuzz --against CMD`: how many cases the other tool answered otherwise."""
    return f"fuzz: {count} of {total} cases where {against!r} differs from us"


def tma_box_text(document: dict, rows: int, inner: int, arch: str) -> str:
    """`tma box`: the chosen swizzle and box for a tile of rows x inner elements, or the rules that
    exclude every box."""
    if document["status"] != "found":
        return f"no legal box: {', '.join(document['reasons']) or 'see --json'}"
    along_inner, along_rows = document["loads_along"] or (None, None)
    return (f"{document['dataType']} tile {rows} x {inner} on {arch}: swizzle "
            f"{document['swizzle']}, box {document['box']} ({document['bytes_per_load']} bytes per load), "
            f"{document['loads']} load{'' if document['loads'] == 1 else 's'} ({along_inner} along the inner "
            f"extent x {along_rows} along the rows)")


# --- tmem ----------------------------------------------------------------------------------------------
def tmem_check_text(instruction: str, target: str, document: dict) -> str:
    lines = [f"{instruction}  on {target}",
             "ptxas: " + ("accepts" if document["ptxas_accepts"] else "refuses")]
    for key, title in (("violations", "violations (ptxas refuses)"),
                       ("undefined", "undefined (ptxas lets it through; wrong at run time)")):
        if document[key]:
            lines.append(f"{title}:")
            lines += [f"  {v['rule']}: {v['message']} [{v['source']}]" for v in document[key]]
        else:
            lines.append(f"{key}: none")
    return "\n".join(lines)


def tmem_cells_text(head: str, document: dict) -> str:
    """A tcgen05 instruction's cells: how many, their lane and column extent, and the rules broken."""
    extent = document["extent"]
    lines = [head, f"cells: {document['count']}" + (
        f", lanes {extent['lanes'][0]}..{extent['lanes'][1]}, columns {extent['columns'][0]}..{extent['columns'][1]}"
        if extent else "")]
    if "violations" in document:
        lines += [f"  {v['rule']}: {v['message']} [{v['source']}]" for v in document["violations"]] or ["violations: none"]
    return "\n".join(lines)


def tmem_row_lanes_text(row_lanes: list) -> str:
    """tcgen05.cp: which lanes each source row goes to (its first four rows)."""
    shown = "; ".join(f"{r}: {','.join(map(str, lanes))}" for r, lanes in enumerate(row_lanes[:4]))
    return shown + ("; ..." if len(row_lanes) > 4 else "")


def tmem_alloc_text(count: int, report: dict) -> str:
    if not report["violations"]:
        return f"{count} allocation operations: no rule broken"
    lines = [f"{count} allocation operations; broken:"]
    lines += [f"  op {v['index']}: {v['rule']}: {v['message']} [{v['source']}]" for v in report["violations"]]
    return "\n".join(lines)


def _cell_label(holders: list) -> str:
    """One 32-bit cell: 't.r' when one register holds the whole cell, else 't.r.lo/t.r.hi' per 16-bit
    half (half 0 first; '-' for a half no register holds)."""
    if len(holders) == 2 and holders[0] and holders[1] and holders[0][:2] == holders[1][:2] \
            and holders[0][2] == 0 and holders[1][2] == 1:
        return f"{holders[0][0]}.{holders[0][1]}"
    return "/".join(f"{h[0]}.{h[1]}.{'lo' if h[2] == 0 else 'hi'}" if h else "-" for h in holders)


def _map_cells(document: dict) -> dict:
    """(lane, column) -> [holder of half 0, holder of half 1], each (thread, register, register half)."""
    cells: dict = {}
    for thread, pieces in enumerate(document["pieces"]):
        for index, (lane, column, half) in enumerate(pieces):
            cells.setdefault((lane, column), [None, None])[half] = (thread, index // 2, index % 2)
    return cells


def tmem_map_figure(document: dict):
    """The fragment map as a picture (solver.pictures.tmem): lanes down, columns across, each cell labelled
    as in the table and filled with the colour of the thread that holds it (the thread of its low half)."""
    from solver.pictures import tmem as tmem_picture
    return tmem_picture.fragment_map(document, _map_cells(document), _cell_label)


def tmem_map_text(document: dict) -> str:
    """Lanes down, columns across (relative to the instruction's address); each cell names the thread and
    register (t.r) that holds it, or per 16-bit half with .pack/.unpack."""
    cells = _map_cells(document)
    lanes = sorted({lane for lane, _ in cells})
    columns = sorted({column for _, column in cells})
    rows = [[str(lane)] + [_cell_label(cells[(lane, c)]) if (lane, c) in cells else "." for c in columns]
            for lane in lanes]
    pack = " .pack::16b" if document["pack"] and document["op"] == "ld" else (
        " .unpack::16b" if document["pack"] else "")
    split = f", half-split offset {document['half_splitoff']}" if document["half_splitoff"] is not None else ""
    head = (f"tcgen05.{document['op']}.{document['shape']}.x{document['num']}{pack}{split}: "
            f"{document['registers_per_thread']} register{'' if document['registers_per_thread'] == 1 else 's'} "
            f"per thread; a cell shows thread.register, or per 16-bit half of the cell (low/high) "
            f"thread.register.lo|hi ('-': a half no register holds)")
    return head + "\n" + _table(["lane\\col"] + [str(c) for c in columns], rows)


# --- ptx -----------------------------------------------------------------------------------------------
def _short_instruction(text: str, limit: int = 110) -> str:
    """An MMA statement with its long register vectors shortened: {%r1, ... %r32} (32 registers)."""
    import re

    def shorten(m):
        items = [x.strip() for x in m.group(1).split(",")]
        return m.group(0) if len(items) <= 4 else f"{{{items[0]}, ... {items[-1]}}} ({len(items)} registers)"
    text = re.sub(r"\{([^{}]*)\}", shorten, text)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _field_text(value, unit: str = "") -> str:
    if value is None:
        return "?"
    return f"{value:#x}" if unit == "hex" else str(value)


def _ptx_operand_rows(site: dict) -> list:
    rows = []
    for role, op in site["operands"].items():
        name = role.upper()
        if op["source"] != "descriptor":
            rows.append([name, op["operand"], op["source"], "", "", "", "", "", ""])
            continue
        f = op["fields"]
        rows.append([name, op["operand"], op["value"], _field_text(f["start_address"], "hex"),
                     _field_text(f["leading_byte_offset"]), _field_text(f["stride_byte_offset"]),
                     _field_text(f["base_offset"]), _field_text(f["swizzle"]),
                     f["lbo_mode"] if site["family"] == "tcgen05" and f["lbo_mode"] else ("?" if site["family"] == "tcgen05" else "-")])
    return rows


def _ptx_read_map(role: str, op: dict, rows: int = 8) -> str:
    """The start of an operand's read map: K-major, rows mn 0..7 and one column per 16-byte chunk of K;
    MN-major, one row per 16-byte chunk of MN (mn 0, T, 2T, ...) and one column per k (at most 16)."""
    addresses, per_chunk = op["addresses"], _elements_per_chunk(op)
    k = len(addresses[0])
    if op["major"] == "K":
        row_indices, columns = list(range(min(rows, len(addresses)))), list(range(0, k, per_chunk))
        note = f"rows mn 0..{row_indices[-1]}, one column per 16-byte chunk of K"
    else:
        row_indices = list(range(0, len(addresses), per_chunk))[:rows]
        columns = list(range(min(k, 16)))
        note = f"one row per 16-byte chunk of MN ({per_chunk} elements), k 0..{columns[-1]}"
    table = _table([f"{role.upper()} mn\\k"] + [str(c) for c in columns],
                   [[str(i)] + [f"{addresses[i][c]:#x}" for c in columns] for i in row_indices])
    return (f"  read map of {role.upper()} ({op['dtype']} {op['major']}-major {op['mn']} x {op['k']}; {note}; "
            f"--json: every element):\n" + textwrap.indent(table, "  "))


def _elements_per_chunk(op: dict) -> int:
    from spec.mma import dtypes
    d = dtypes.dtype(op["dtype"])
    return dtypes.elements_per_chunk(d, op.get("kind") or dtypes.default_kind(d))


def _ptx_shape_line(site: dict) -> str:
    shape, types = site["shape"], site["dtypes"]
    def operand(role):
        op = site["operands"][role]
        return f"{role.upper()} {types[role] or '?'}" + (f" {op['major']}-major" if op["major"] else "") + \
            (f" ({_field_text(op['mn'])} x {_field_text(op['k'])})" if op["source"] == "descriptor" else f" in {op['source']}")
    extra = [f"kind::{site['kind']}"] if site["kind"] else []
    if site["cta_group"]:
        extra.append(f"cta_group::{site['cta_group']}")
    extra += [name for name in ("sparse", "ws", "block_scale") if site[name]]
    return (f"  M={_field_text(shape['m'])} N={_field_text(shape['n'])} K={_field_text(shape['k'])}"
            f"{' ' + ' '.join(extra) if extra else ''}; {operand('a')}, {operand('b')}, D {types['d'] or '?'}")


def ptx_sites_text(document: dict) -> str:
    sites = document["sites"]
    head = (f"{len(sites)} MMA site{'' if len(sites) == 1 else 's'} in {len(document['functions'])} function"
            f"{'' if len(document['functions']) == 1 else 's'}; shared memory from {document['smem_base']:#x} "
            f"(--smem-address)" + (f"; {len(document['unread'])} MMA statement"
                                f"{'' if len(document['unread']) == 1 else 's'} not read (listed last)"
                                if document["unread"] else ""))
    blocks = [head]
    for site in sites:
        lines = [f"{site['function']} line {site['line']}: {_short_instruction(site['instruction'])}",
                 f"  {site['arch']} ({site['arch_from']})" + (f", guarded by {site['guard']}" if site["guard"] else "")
                 + (f", in the loop of lines {site['loop']['header_line']}-{site['loop']['back_branch_line']}: "
                    "values of its first iteration" if site["first_iteration"] else ""),
                 _ptx_shape_line(site)]
        table = _table(["operand", "from", "descriptor", "start", "LBO", "SBO", "base", "swizzle", "lbo mode"],
                       _ptx_operand_rows(site))
        lines.append(textwrap.indent(table, "  "))
        idesc = site["instr_desc"]
        if idesc is not None:
            named = "" if idesc["operand"] == idesc["value"] or not idesc["operand"] else f"{idesc['operand']} = "
            lines.append(f"  instruction descriptor {named}{idesc['value']}"
                         + ("" if idesc["known"] else " (unknown bits: M, N, types and majors only where known)"))
        for role, op in site["operands"].items():
            if op["addresses"]:
                lines.append(_ptx_read_map(role, op))
            elif op["source"] == "descriptor" and op["no_addresses"]:
                lines.append(f"  no read map of {role.upper()}: {op['no_addresses']}")
        found = [{"rule": v["rule"], "message": f"{v['operand']}: {v['message']}", "source": v["source"]}
                 for v in site["violations"]]
        lines.append(textwrap.indent(violations_text(found), "  "))
        lines += ["  " + line for line in _possible_lines([site])]
        blocks.append("\n".join(lines))
    return "\n".join(blocks + _unread_lines(document["unread"]))


LONG_FUNCTION_NAME = 60      # characters: a longer function name is "function K" in the text, named once


def ptx_sites_summary(document: dict) -> str:
    """One line per site: the warps that reached it, and each descriptor operand's values over every
    iteration the run evaluated (--full: the whole site)."""
    sites = document["sites"]
    functions = document["functions"]
    lines = [f"{len(sites)} MMA site{'' if len(sites) == 1 else 's'} in {len(functions)} function"
             f"{'' if len(functions) == 1 else 's'}; shared memory from {document['smem_base']:#x} (--smem-address); "
             f"{len(document['others'])} TMA / tensor-memory statement{'' if len(document['others']) == 1 else 's'}"]
    labels, legend = _function_labels(document["runs"])
    lines += legend
    for name, run in document["runs"].items():
        if run["not_run"]:
            lines.append(f"{labels[name]}: {run['not_run']}")
            continue
        for role in run["roles"]:
            ended = "ran to the end" if role["stopped"] is None else f"stopped: {role['stopped']}"
            lines.append(f"{labels[name]}: warps {_warp_ranges(role['warps'])} reach {len(role['site_lines'])} site"
                         f"{'' if len(role['site_lines']) == 1 else 's'}; {ended}")
    rows = []
    for site in sites:
        every = site["iterations"]
        shape = site["shape"]
        mnk = "".join(f"{axis}{_field_text(shape[axis])}" for axis in ("m", "n", "k"))
        row = [str(site["line"]), f"{site['family']} {mnk}" + (f" {site['kind']}" if site["kind"] else ""),
               _warp_ranges(every["warps"]) if every else "-", str(every["visits"]) if every else "0"]
        for role in ("a", "b"):
            row.append(_operand_values_text(site, role))
        row.append(str(len(site["violations"])))
        rows.append(row)
    lines.append(_table(["line", "MMA", "warps", "visits", "A", "B", "violations"], rows))
    found = [{"rule": v["rule"], "message": f"line {site['line']} {v['operand']}: {v['message']}", "source": v["source"]}
             for site in sites for v in site["violations"]]
    lines.append(violations_text(found))
    lines += _possible_lines(sites)
    return "\n".join(lines + _unread_lines(document["unread"]))


def _possible_lines(sites: list) -> list:
    possible = [f"  {v['rule']}: line {site['line']} {v['operand']} {v['descriptor']}: {v['message']} [{v['source']}]"
                for site in sites for v in site.get("possible_violations", [])]
    if not possible:
        return []
    return ["possible, for some launch (values of the any-launch sets, which may hold values no launch "
            "reaches; not counted in the exit status):"] + possible


def _warp_ranges(warps: list) -> str:
    from solver.kernel.iterations import warp_ranges
    return warp_ranges(warps) or "-"


def _operand_values_text(site: dict, role: str) -> str:
    """The distinct descriptors of an operand over every visit (their start addresses), or what is known."""
    op = site["operands"][role]
    if op["source"] != "descriptor":
        return op["source"]
    seen = (site["iterations"] or {}).get("operands", {}).get(role)
    any_launch = ((site["iterations"] or {}).get("any_launch") or {}).get(role)
    if seen is not None and seen["known"] and (site["iterations"]["complete"] or not (any_launch or {}).get("known")):
        pattern = site["iterations"]["start_patterns"].get(role)
        more = "" if op["known"] else "; the run is not whole: others may follow"    # (mma.site_document)
        if pattern is not None and seen["count"] > 1:
            return f"{seen['count']} values, start {pattern}{more}"
        return _values_text(site, seen["distinct"], seen["count"], "") + more
    if any_launch is not None and any_launch["known"]:
        return _values_text(site, any_launch["values"], any_launch["count"], " (any launch)")
    if op["known"]:
        return f"{op['value']} (first iteration)" if site["first_iteration"] else op["value"]
    reason = seen["unknown"] if seen is not None else "not reached by the run"
    return f"{op['value']} ({_short_reason(reason)})"


def _values_text(site: dict, words: list, count: int, where: str) -> str:
    starts = [_start_of(site, word) for word in words]
    shown = ", ".join(starts[:4]) + (", ..." if len(starts) > 4 else "")
    return f"{count} value{'' if count == 1 else 's'}{where}, start {shown}"


def _start_of(site: dict, word: str) -> str:
    from spec.mma import descriptor
    return f"{descriptor.decode(site['arch'], int(word, 16)).start_address:#x}"


def _short_reason(reason: str) -> str:
    return reason if len(reason) <= 60 else reason[:57] + "..."


def _function_labels(names) -> tuple:
    """({name: how a table shows it}, the legend lines): a name of LONG_FUNCTION_NAME characters or fewer
    is itself; a longer one (a C++ mangled name) is "function K", K counting those in order, and a legend
    line before the table names it in full, once."""
    labels, legend = {}, []
    for name in names:
        if name in labels:
            continue
        if len(name) > LONG_FUNCTION_NAME:
            labels[name] = f"function {len(legend) + 1}"
            legend.append(f"{labels[name]}: {name}")
        else:
            labels[name] = name
    return labels, legend


def ptx_check_text(document: dict) -> str:
    named = [f for layout in document["layouts"].values() for f in layout["tile_address"]]
    labels, lines = _function_labels(named + [c["function"] for c in document["checks"]])
    for label, layout in document["layouts"].items():
        places = ", ".join(f"{labels[function]} {_field_text(address, 'hex')}"
                           for function, address in layout["tile_address"].items())
        staged = f", {layout['stages']} stages {layout['stage_stride']:#x} apart" if layout["stages"] > 1 else ""
        lines.append(f"operand {label}: {layout['layout']} at {places} ({layout['tile_address_from']}{staged})")
    rows = [[str(c["line"]), labels[c["function"]], c["operand"].upper(), c["tile"] or "-",
             "-" if c["stage"] is None else str(c["stage"]), _field_text(c["mn_offset"]), _field_text(c["k_offset"]),
             c["descriptor"] or "-", "-" if c["visits"] is None else str(c["visits"]),
             c["status"] + (" (first iteration)" if c["first_iteration"] else
                            " (any launch)" if c["any_launch"] else "")]
            for c in document["checks"]]
    lines.append(_table(["line", "function", "operand", "tile", "stage", "mn offset", "k offset", "descriptor",
                         "visits", "result"], rows))
    for c in document["checks"]:
        if c["status"] == "mismatch" or c["violations"] or c["witness"]:     # (unknown: a possible misread)
            possibly = "" if c["status"] == "mismatch" else f": {c['reason']}"
            lines.append(f"line {c['line']} operand {c['operand'].upper()} {c['descriptor']} (tile {c['tile']}, "
                         f"MN offset {c['mn_offset']}, K offset {c['k_offset']}){possibly}:")
            lines += [f"  {v['rule']}: {v['message']} [{v['source']}]" for v in c["violations"]]
            w = c["witness"]
            if w:
                lines.append(f"  element (mn={w['tile_element']['mn']}, k={w['tile_element']['k']}) is held at "
                             f"{w['held_at']:#x} but read from {w['read_from']:#x}")
        elif c["status"] == "unknown":
            lines.append(f"line {c['line']} operand {c['operand'].upper()}: not checked: {c['reason']}")
    lines += _unread_lines(document["unread"])
    s = document["summary"]
    lines.append(f"{s['match']} match, {s['mismatch']} mismatch, {s['unknown']} unknown, {s['unread']} unread")
    return "\n".join(lines)


def _unread_lines(unread: list) -> list:
    """The MMA statements of the file that were not read (solver.kernel.analysis.unread_statements)."""
    return [f"line {u['line']}: not read: {_short_instruction(u['text'])}: {u['reason']}" for u in unread]


def audit_text(document: dict) -> str:
    """`audit`: per kernel, one row per property (its status, id, and what was checked, the witness or the
    reason), then the assumptions the proofs rest on."""
    parts = []
    for kernel in document["kernels"]:
        rows = []
        for p in kernel["properties"]:
            detail = _audit_witness(p["witness"]) if p["status"] == "refuted" else p["reason"] or ""
            rows.append([p["status"], p["id"], one_line(detail, 240)])
        verdict = "ok" if kernel["ok"] else "NOT ok"
        parts.append(f"{kernel['kernel']}: {verdict}\n" + _table(["status", "property", "checked / witness / reason"],
                                                                rows))
    if not document["kernels"]:
        parts.append("no .entry audited")
    parts.append("assuming: " + "; ".join(a["id"] for a in document["assumptions"]) + " (--json states them)")
    return "\n\n".join(parts)


def _audit_witness(witness: dict) -> str:
    """What a witness says, and where: the MMA's line, warp and iteration (--json has the rest)."""
    where = [f"{name} {witness[key]}" for key, name in (("mma_line", "line"), ("line", "line"), ("warp", "warp"))
             if key in witness]
    if witness.get("iteration"):
        where.append(f"iteration {','.join(map(str, witness['iteration']))}")
    return witness["what"] + (f" ({', '.join(where)})" if where else "")


def audit_file_lines(result: dict) -> str:
    """`audit` over several files: one line per kernel (file, kernel, verdict, the first property not
    proved), or the file's error."""
    if result["error"] is not None:
        return f"{result['file']}: error: {result['error']}"
    if not result["kernels"]:
        return f"{result['file']}: no .entry audited"
    lines = []
    for kernel in result["kernels"]:
        counts = {s: sum(p["status"] == s for p in kernel["properties"]) for s in ("proved", "refuted", "unknown")}
        first = next((p for p in kernel["properties"] if p["status"] == "refuted"), None) or \
            next((p for p in kernel["properties"] if p["status"] == "unknown"), None)
        tail = "" if first is None else f"  {first['status']} {first['id']}: " + one_line(
            _audit_witness(first["witness"]) if first["status"] == "refuted" else first["reason"] or "", 120)
        lines.append(f"{result['file']} {kernel['kernel']}: {'ok' if kernel['ok'] else 'NOT ok'} "
                     f"({counts['proved']} proved, {counts['refuted']} refuted, {counts['unknown']} unknown){tail}")
    return "\n".join(lines)


def audit_summary(summary: dict) -> str:
    return (f"{summary['files']} files, {summary['kernels']} kernels: {summary['ok']} ok, {summary['not_ok']} not ok, "
            f"{summary['errors']} files not read")


# --- scales -------------------------------------------------------------------------------------------------
MAX_SHOWN_ROWS, MAX_SHOWN_BLOCKS = 16, 12


def scales_map_text(found) -> str:
    """`scales map`: the first rows and blocks of the positions (spec.scales.layouts.ScaleMap)."""
    shown_blocks = min(found.k_blocks, MAX_SHOWN_BLOCKS)
    header = ["row"] + [f"kb{c}" for c in range(shown_blocks)] + (["..."] if found.k_blocks > shown_blocks else [])
    rows = [[str(r)] + [str(o) for o in found.offsets[r][:shown_blocks]] +
            (["..."] if found.k_blocks > shown_blocks else []) for r in range(min(found.rows, MAX_SHOWN_ROWS))]
    lines = [f"{found.sf_layout} scales of {found.rows} rows x K {found.k} in blocks of {found.block}: "
             f"{found.k_blocks} per row, {found.footprint} scale bytes; the position of each scale (row, K block):",
             _table(header, rows)]
    if found.rows > MAX_SHOWN_ROWS or found.k_blocks > shown_blocks:
        lines.append(f"(the first {min(found.rows, MAX_SHOWN_ROWS)} rows and {shown_blocks} blocks; --json gives all)")
    return "\n".join(lines)


def scales_check_text(found) -> str:
    """`scales check`: ok, or the first element given another scale (spec.scales.path.ScaleCheck)."""
    head = (f"{found.sf_layout} scales read by .kind::{found.kind}.block_scale.scale_vec::{found.vector} "
            f"(blocks of {found.block}), {found.rows} rows x K {found.k}, through tcgen05.cp.{found.copy}:")
    if found.ok:
        return head + "\nok: every element gets the scale the writer put for its row and K block"
    m = found.misread
    got = f"the scale of row {m['applied_scale_of'][0]}, block {m['applied_scale_of'][1]}" \
        if m["applied_scale_of"] else "a byte the writer did not write"
    if m.get("sub_partitions"):
        return (head + f"\nmisread: row {m['row']}, k {m['k'][0]}..{m['k'][1]} (block {m['k_block']}): the four "
                       f"sub-partitions hold different scales (positions {m['sub_partitions']}), which the MMA "
                       "needs duplicated [scales.tmem.cells]")
    return (head + f"\nmisread: row {m['row']}, k {m['k'][0]}..{m['k'][1]} (block {m['k_block']}) gets {got} "
                   f"(position {m['applied_offset']}, not {m['expected_offset']}) [scales.path.interleaved_writer]")


def scales_plan_text(found) -> str:
    """`scales plan`: the loads, copies and k-steps, or the rules that exclude a plan
    (solver.synth.scales_plan.Plan)."""
    r = found.request
    head = (f"scales plan: .kind::{r.kind} M {r.m} x N {r.n} x K {r.k}, .cta_group::{r.cta_group}, "
            f"{r.sf_layout} scales")
    if not found.found:
        lines = [head, "none: no plan keeps these rules together: " + ", ".join(found.rules)]
        if found.always_broken != found.rules:
            lines.append("every candidate breaks: " + ", ".join(found.always_broken))
        lines += [f"  {candidate}: breaks " + ", ".join(rules) for candidate, rules in found.rejected.items()]
        return "\n".join(lines)
    t = found.tmem
    lines = [head, f"scale vector {found.vector} (blocks of {found.block}), {found.scale_type} scales; "
                   f"tensor memory: D columns {t['d_columns'][0]}..{t['d_columns'][1]}, A's scales "
                   f"{t['a_columns'][0]}..{t['a_columns'][1]}, B's {t['b_columns'][0]}..{t['b_columns'][1]}; "
                   f"allocate {t['allocate']} columns", ""]
    lines.append("loads (one TMA load per operand, UINT8, dims innermost first):")
    lines.append(_table(["operand", "rows", "K blocks", "bytes", "smem address", "boxDim"],
                        [[name, str(o["rows"]), str(o["k_blocks"]), str(o["bytes"]), f"0x{o['smem_address']:x}",
                          str(o["tensor_map"]["boxDim"])] for name, o in found.operands.items()]))
    lines += ["", "copies (tcgen05.cp.32x128b.warpx4, K-major descriptor, no swizzle, LBO 16, SBO 128):"]
    lines.append(_table(["#", "operand", "smem address", "column", "descriptor"],
                        [[str(c["index"]), c["operand"], f"0x{c['smem_address']:x}", str(c["column"]),
                          c["descriptor"]] for c in found.copies]))
    lines += ["", "k-steps (tcgen05.mma ... .block_scale" + f".scale_vec::{found.vector}):"]
    lines.append(_table(["t", "k", "scale A column", "sf id A", "scale B column", "sf id B", "instr desc"],
                        [[str(s["t"]), f"{s['k'][0]}..{s['k'][1]}", str(s["a_column"]), str(s["sf_id_a"]),
                          str(s["b_column"]), str(s["sf_id_b"]), s["instr_desc"]] for s in found.steps]))
    check = found.check
    lines.append("")
    lines.append("check: " + ("every scale of A and B reaches the elements it belongs to, every descriptor reads "
                              "its chunk, every copy accepted on sm_100a, every instruction descriptor as planned "
                              "(spec.scales.path, spec.tmem.cp, spec.tmem.instruction, spec.mma.instr_desc)"
                              if check["ok"] else f"FAILED {check}"))
    return "\n".join(lines)


# --- im2col ------------------------------------------------------------------------------------------
def im2col_placement_text(load: spec_im2col.Im2colLoad, loaded: list = None) -> JSONText:
    """json.dumps(spec_im2col.placement_json(load)), written a row at a time from spec_im2col.placement_rows (the
    JSON encoder would take most of the command's time on 64K elements; tests/spec_tests/fast/test_fast_paths.py checks
    the text against json.dumps). `loaded`: spec_im2col.pixels(load), when the caller has it already."""
    missing = ', "source": null, "fill": ' + json.dumps(spec_im2col.fill_value(load)) + ', "smem_address": '
    tail = '], "fill": null, "smem_address": '
    rows, names, every = [], None, None
    for pixel, along, inside, addresses in spec_im2col.placement_rows(load, loaded):
        if names is None:
            names = [str(channel) for channel in along]       # json.dumps of an int is its str
            every = all(inside)
        head = '{"row": %d, "channel": ' % pixel.row
        kept = ', "source": [%d, %d, %d, %d, ' % (pixel.n, pixel.d, pixel.h, pixel.w)
        if pixel.oob:
            rows.append(", ".join([f"{head}{c}{missing}{a}}}" for c, a in zip(names, addresses)]))
        elif every:
            rows.append(", ".join([f"{head}{c}{kept}{c}{tail}{a}}}" for c, a in zip(names, addresses)]))
        else:
            rows.append(", ".join([f"{head}{c}{kept}{c}{tail}{a}}}" if ok else f"{head}{c}{missing}{a}}}"
                                   for c, ok, a in zip(names, inside, addresses)]))
    return JSONText("[" + ", ".join(row for row in rows if row) + "]")


def im2col_text(load, box: dict, found: list) -> str:
    """`im2col`: one line per shared-memory row: its pixel, halo / out-of-bounds marks, the row's
    (unswizzled) start address and where its first channel lands after swizzling. `box` is the
    bounding box document {"w": [low, high], ...}."""
    loaded = spec_im2col.pixels(load)
    starts = spec_im2col.row_addresses(load)
    spans = ", ".join(f"{name} [{a}, {b}]" for name, (a, b) in box.items())
    lines = [f"{spec_im2col.MODES[load.mode]} load of a {load.layout} tensor {'x'.join(map(str, load.tensor))}: "
             f"{len(loaded)} rows of {load.channels_per_pixel} channels ({load.row_bytes} bytes), "
             f"channels {load.coords[0]}..{load.coords[0] + load.channels_per_pixel - 1}, box {spans}, "
             f"swizzle {load.swizzle}, destination {load.smem_address:#x}",
             f"{'row':>5} {'n':>6} {'d':>5} {'h':>5} {'w':>6}  {'kind':<5} {'oob':<4} {'row at':>9} {'c0 at':>9}"]
    for p, row_start in zip(loaded, starts):
        first = spec_tma_swizzle.swizzle_byte_address(load.swizzle, row_start)
        lines.append(f"{p.row:>5} {p.n:>6} {p.d:>5} {p.h:>5} {p.w:>6}  {'halo' if p.halo else 'main':<5} "
                     f"{'OOB' if p.oob else '':<4} {row_start:>#9x} {first:>#9x}")
    channels = [c for c in range(load.coords[0], load.coords[0] + load.channels_per_pixel)
                if not 0 <= c < load.tensor[0]]
    if channels:
        lines.append(f"channels {channels[0]}..{channels[-1]} are outside C = {load.tensor[0]}: "
                     f"filled ({spec_im2col.fill_value(load)}) in every row")
    lines.append("violations: none" if not found else "violations:\n" + "\n".join(f"  {v}" for v in found))
    return "\n".join(lines)


def im2col_refused_text(load, box: dict, found: list) -> str:
    """`im2col` of a load too large to exist (spec.tma.spec_im2col.listable): what it is, and the rules."""
    spans = ", ".join(f"{name} [{a}, {b}]" for name, (a, b) in box.items())
    return "\n".join([f"{spec_im2col.MODES[load.mode]} load of a {load.layout} tensor {'x'.join(map(str, load.tensor))}: "
                      f"{load.channels_per_pixel} channels per pixel, box {spans}: not listed, the load breaks "
                      f"the rules below", "violations:\n" + "\n".join(f"  {v}" for v in found)])


# --- tmem plan ---------------------------------------------------------------------------------------
def _plan_span(values) -> str:
    values = sorted(values)
    if not values:
        return "-"
    if values == list(range(values[0], values[-1] + 1)):
        return f"{values[0]}..{values[-1]}" if len(values) > 1 else str(values[0])
    return f"{len(values)} values in {values[0]}..{values[-1]}"


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _holder_text(holder) -> str:
    warp, thread, index, register, half = holder
    part = "" if half is None else (" low half" if half == 0 else " high half")
    return f"warp {warp}, thread {thread}, instruction {index}, register %r{register}{part}"


def _plan_instruction_rows(result) -> list:
    """Per instruction: the D rows and columns it reads (down its first column and along its first lane)
    and its first register pieces, from its fragment map (spec.tmem.spec_ld_st.fragment_map) and D's map."""
    rows, maps = [], {}
    for index, ins in enumerate(result.instructions):
        key = (ins.shape, ins.num, ins.pack, ins.half_splitoff)
        if key not in maps:
            maps[key] = spec_ld_st.fragment_map(*key)
        pieces = maps[key]
        # rows down the first column, columns along the first lane (a band of D is lanes x columns)
        elements = {result.cells.get((ins.lane + lane, ins.column)) for lane, _, _ in pieces[0] + pieces[-1]}
        elements |= {result.cells.get((ins.lane + lane, ins.column)) for lane in range(32)}
        elements |= {result.cells.get((ins.lane, ins.column + column)) for thread in pieces
                     for _, column, _ in thread}
        elements.discard(None)

        def element(thread, piece):
            lane, column, _ = pieces[thread][piece]
            found = result.cells.get((ins.lane + lane, ins.column + column))
            return f"D[{found[0]}][{found[1]}]" if found else "-"

        rows.append([index, _plan_span({m for m, _ in elements}), _plan_span({n for _, n in elements}),
                     _plan_sample(element, len(pieces[0]) // 2, ins.pack, result.acc.bits)])
    return rows


PLAN_SAMPLE_REGISTERS = ((0, 0), (0, 1), (1, 0))     # (thread, register) shown per instruction: t0 %r0, t0 %r1, t1 %r0


def _plan_sample(element, registers: int, pack: bool, bits: int) -> str:
    """What the first registers of threads 0 and 1 hold, as far as the instruction has registers (one
    register per thread, --registers 1, has no t0 %r1). Register j holds pieces 2j and 2j+1
    (spec.tmem.spec_ld_st.fragment_map): with .pack::16b two elements of D, else one cell, whose low half is
    the element of a 16-bit D."""
    def held(thread, register):
        low = element(thread, 2 * register)
        if pack:
            return f"{low},{element(thread, 2 * register + 1)}"
        return f"{low} (low half)" if bits == 16 and (thread, register) == (0, 0) else low
    return "; ".join(f"t{thread} %r{register} = {held(thread, register)}"
                     for thread, register in PLAN_SAMPLE_REGISTERS if register < registers)


def tmem_plan_text(result, document: dict, at=None) -> str:
    acc = document["accumulator"]
    head = (f"tmem plan: D {acc['M']} x {acc['N']} {acc['dtype']}, layout {acc['layout']} "
            f"(cta_group::{acc['cta_group']}{', .ws' if acc['ws'] else ''}{', sparse A' if acc['sparse'] else ''}), "
            f"{acc['rows_per_cta']} rows per CTA; "
            f"%taddr = {acc['address']} (lane 0, column {acc['column']}); warps "
            f"{','.join(map(str, document['warps']))}; budget {_plural(document['registers'], 'register')} per thread "
            f"per instruction")
    lines = [head, f"objective: {document['objective']}"]
    if result.status != "found":
        lines.append(f"no plan: {document['reason']}")
        lines.append("rules: " + ", ".join(document["rules"]))
        return "\n".join(lines)
    nums = sorted({i["num"] for i in document["instructions"]}, reverse=True)
    lines.append(f"plan: {len(document['instructions'])} tcgen05.ld .{document['shape']}"
                 f"{' .pack::16b' if document['pack'] else ''}, .num "
                 + " ".join(f"x{n}" for n in nums)
                 + f"; at most {_plural(max(i['registers'] for i in document['instructions']), 'register')} per thread"
                 + (f"; idle warps {','.join(map(str, document['idle_warps']))}" if document["idle_warps"] else ""))
    if acc["cta_group"] == 2:
        lines.append(f"cta_group::2: each CTA of the pair runs this plan on its own {acc['rows_per_cta']} rows "
                     f"(the peer's D rows {acc['rows_per_cta']}..{acc['M'] - 1})")
    rows = _plan_instruction_rows(result)
    for entry in document["per_warp"]:
        lines.append("")
        lines.append(f"warp {entry['warp']} (lanes {entry['lanes'][0]}..{entry['lanes'][1]}): "
                     f"{_plural(len(entry['instructions']), 'instruction')}, {entry['registers']} registers per thread in all")
        lines.append(_table(["#", "D rows", "D columns", "thread t, register %rj"],
                                   [rows[i] for i in entry["instructions"]]))
        for i in entry["instructions"]:
            lines.append(f"  {result.instructions[i].ptx(result.acc.column, abbreviate=True)}")
    check = document["check"]
    lines.append("")
    room = document["register_file"]
    if not room["fits"]:
        lines.append(f"note: a warp holds {room['largest_in_all']} registers per thread in all, past the "
                     f"{room['per_thread']} a thread has: use each instruction's registers (tcgen05.wait::ld, then "
                     "convert or store) before the next instruction loads")
    if at is not None:
        lines.append(f"D[{at['m']}][{at['n']}]: " + (_holder_text(at["holder"]) if at["holder"] else "not read"))
    if check["read_exactly_once"] and check["ptxas_accepts"] and not check["undefined"]:
        lines.append(f"check: every element of D read exactly once ({check['elements']} elements), each warp "
                     f"inside its lane quarter, every instruction accepted on {check['target']} "
                     f"(spec.tmem: instruction check, fragment maps, d_cell)")
    else:
        lines.append("check FAILED: " + "; ".join(check["problems"] + check["undefined"]
                                                  + ([] if check["ptxas_accepts"] else ["ptxas would refuse"])))
    lines.append("(%taddr is D's tensor-memory address; the offset is lane << 16 | column - C; registers are "
                 "numbered within each instruction's vector; --json has holders[m][n] and the full PTX)")
    return "\n".join(lines)
