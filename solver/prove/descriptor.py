"""Descriptor encode/decode round trips, proved over every field value (solver.model.descriptor against
itself, and its counterexamples replayed through spec.mma.descriptor), and the model's bit positions
against the manual's bit table (desc.table.*, the table kept as data in solver/prove/manual_tables.py)."""
from __future__ import annotations

import z3

from spec.mma import descriptor as spec_descriptor
from spec.rules import SpecError

from solver.model import descriptor as model
from solver.prove import manual_tables
from solver.prove.property import Query, prop

SOURCES = {"sm90": "PTX 9.7.15.5.1.2.2", "sm100": "PTX 9.7.16.4.1 Table 40",
           "sm103": "PTX 9.7.16.4.1 Table 40"}


def _field_variables(arch: str) -> dict:
    fields = {}
    for name, _, width in model.LAYOUTS[arch]:
        if name in model.FIXED:
            continue
        raw = z3.BitVec(name, width)
        fields[name] = z3.ZeroExt(32 - width, raw) << 4 if name in model.BYTE_FIELDS else z3.ZeroExt(32 - width, raw)
    return fields


def _fields_query(arch: str) -> Query:
    fields = _field_variables(arch)
    decoded = model.decode(arch, model.encode(arch, fields))
    claim = z3.And(*[decoded[name] == value for name, value in fields.items()])
    return Query(fields, [], claim)


def _word_query(arch: str, well_formed: bool) -> Query:
    word = z3.BitVec("word", 64)
    defined = model.defined_bits(arch)
    assumptions = []
    if well_formed:
        assumptions.append(word & z3.BitVecVal(~defined & (2 ** 64 - 1), 64) == 0)
        for name, lo, width in model.LAYOUTS[arch]:
            if name in model.FIXED:
                assumptions.append(z3.Extract(lo + width - 1, lo, word) == model.FIXED[name])
    claim = model.encode(arch, model.decode(arch, word)) == word
    return Query({"word": word}, assumptions, claim)


def _replay_word(arch: str):
    def replay(c: dict) -> bool:
        decoded = spec_descriptor.decode(arch, c["word"])
        try:
            again = spec_descriptor.with_fields(decoded)
        except SpecError:
            return True          # the word holds a value no encoding produces (e.g. swizzle code 3)
        return again.raw != c["word"]
    return replay


def _replay_fields(arch: str):
    def replay(c: dict) -> bool:
        names = {v: k for k, v in spec_descriptor.swizzle_codes(arch).items()}
        if c["swizzle"] not in names:
            return False
        d = spec_descriptor.encode(arch, c["start"], c["lbo"], c["sbo"], names[c["swizzle"]], c["base_offset"],
                                   None if arch == "sm90" else ("absolute" if c["lbo_mode"] else "relative"))
        back = spec_descriptor.decode(arch, d.raw)
        return (back.start_address, back.leading_byte_offset, back.stride_byte_offset) != \
            (c["start"], c["lbo"], c["sbo"])
    return replay


# The bit tables the round trips check, and the rules on the bits outside the fields (PTX 9.7.15.5.1.2.2;
# 9.7.16.4.1 Table 40)
LAYOUT_RULES = {"sm90": ("desc.sm90.layout", "desc.field.encoding"),
                "sm100": ("desc.sm100.layout", "desc.field.encoding"),
                "sm103": ("desc.sm100.layout", "desc.field.encoding")}
UNUSED_BITS_RULES = {"sm90": ("desc.sm90.unused_bits_zero",),
                     "sm100": ("desc.sm100.fixed_bits", "desc.sm100.reserved_bits_zero"),
                     "sm103": ("desc.sm100.fixed_bits", "desc.sm100.reserved_bits_zero")}

for _arch in ("sm90", "sm100", "sm103"):
    prop(f"desc.roundtrip.{_arch}", f"{_arch}: decoding an encoded descriptor gives back every field.",
         "every value of every field (start, LBO, SBO: multiples of 16 below 2^18; base offset 0-7; "
         "every swizzle code; LBO mode)", SOURCES[_arch], "proved", _replay_fields(_arch), "desc",
         rules=LAYOUT_RULES[_arch])(
             lambda arch=_arch: _fields_query(arch))
    prop(f"desc.roundtrip.{_arch}.words", f"{_arch}: encoding a decoded descriptor gives back the word, "
         "for every word whose unused bits are 0 and whose fixed bits hold their constant.",
         "every 64-bit word with unused bits 0 (and bits [46,49) = 0b001 on sm100/sm103)", SOURCES[_arch],
         "proved", _replay_word(_arch), "desc", rules=LAYOUT_RULES[_arch])(lambda arch=_arch: _word_query(arch, True))
    prop(f"desc.roundtrip.{_arch}.any_word", f"{_arch}: the same for every 64-bit word (false: unused "
         "and fixed bits do not survive decoding).", "every 64-bit word", SOURCES[_arch], "refuted",
         _replay_word(_arch), "desc", rules=LAYOUT_RULES[_arch] + UNUSED_BITS_RULES[_arch])(
             lambda arch=_arch: _word_query(arch, False))


# --- desc.table: the model against the manual's bit table (solver/prove/manual_tables.py) -------------------
# The round trips above compare the model with itself: a field moved consistently in encode and decode
# (SBO at bit 33, the swizzle at bit 60, another fixed constant) survives them. These compare encode and
# decode with the manual's table, kept as data apart from the model.
def _manual_value(entry, word):
    """The manual's reading of one table row of `word`, as a 32-bit term (byte fields in bytes)."""
    name, first, last, _ = entry
    value = z3.ZeroExt(32 - (last - first + 1), z3.Extract(last, first, word))
    return value << manual_tables.DESCRIPTOR_ENCODED_SHIFT if name in manual_tables.DESCRIPTOR_ENCODED_FIELDS \
        else value


def _table_query(arch: str) -> Query:
    table = manual_tables.DESCRIPTOR_BIT_TABLES[arch]
    stored = {name: z3.BitVec(f"stored_{name}", last - first + 1)
              for name, first, last, fixed in table if fixed is None}
    fields = {name: (z3.ZeroExt(32 - raw.size(), raw) << manual_tables.DESCRIPTOR_ENCODED_SHIFT
                     if name in manual_tables.DESCRIPTOR_ENCODED_FIELDS else z3.ZeroExt(32 - raw.size(), raw))
              for name, raw in stored.items()}
    encoded = model.encode(arch, fields)
    listed = sum(((1 << (last - first + 1)) - 1) << first for _, first, last, _ in table)
    encodes = [z3.Extract(last, first, encoded) == (stored[name] if fixed is None else fixed)
               for name, first, last, fixed in table]
    encodes.append(encoded & z3.BitVecVal(~listed & (2 ** 64 - 1), 64) == 0)
    word = z3.BitVec("word", 64)
    decoded = model.decode(arch, word)
    decodes = [decoded[name] == _manual_value(entry, word) for entry in table
               for name in [entry[0]] if entry[3] is None]
    variables = dict(stored, word=word, encoded=encoded)
    return Query(variables, [], z3.And(*encodes, *decodes))


def _manual_fields(arch: str, word: int) -> dict:
    """The manual's reading of a concrete word: field name -> value (byte fields in bytes)."""
    fields = {}
    for name, first, last, fixed in manual_tables.DESCRIPTOR_BIT_TABLES[arch]:
        value = (word >> first) & ((1 << (last - first + 1)) - 1)
        fields[name] = value << manual_tables.DESCRIPTOR_ENCODED_SHIFT \
            if name in manual_tables.DESCRIPTOR_ENCODED_FIELDS else value
    return fields


def _replay_table(arch: str):
    """spec.mma.descriptor confirms a counterexample when it, too, reads the word (or the encoded word)
    otherwise than the manual's table does."""
    def replay(c: dict) -> bool:
        for word in (c["word"], c["encoded"]):
            manual = _manual_fields(arch, word)
            spec = spec_descriptor.decode(arch, word)
            if (spec.start_address, spec.leading_byte_offset, spec.stride_byte_offset, spec.base_offset) != \
                    (manual["start"], manual["lbo"], manual["sbo"], manual["base_offset"]):
                return True
        return False
    return replay


for _arch in ("sm90", "sm100", "sm103"):
    prop(f"desc.table.{_arch}",
         f"{_arch}: the model's encode puts every field at the bits the manual's table gives it (fixed "
         "bits at their constants, unlisted bits 0), and its decode reads every field from those bits.",
         "every value of every field; every 64-bit word", SOURCES[_arch], "proved", _replay_table(_arch),
         "desc", rules=LAYOUT_RULES[_arch] + UNUSED_BITS_RULES[_arch])(
             lambda arch=_arch: _table_query(arch))
