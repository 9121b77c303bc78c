"""The JSON Schema of a tensor-map parameter document (`layoutproof tma schema`): what
spec.tma.tensormap_params.parse_params reads, generated from the same tables (keys per encoder, the
cuda.h enumerations, the C integer types), so it cannot drift from the parser. Users validate their
documents with it in their own CI before calling `tma check`.

It describes the document's form only (keys, types, enumerations, C integer ranges, list lengths of at
most 5): that a form is well-made is not that the encoder accepts it; the rules (`tma check`) decide that.
A list's length against `rank` is checked by `tma check`, not here (JSON Schema cannot relate them).
"""
from __future__ import annotations

from spec.tma import tensormap_params as tp

SCHEMA_ID = "https://layoutproof.invalid/schemas/tensormap-params.json"
DIALECT = "https://json-schema.org/draft/2020-12/schema"


def _c_int(bits: int, signed: bool) -> dict:
    if signed:
        return {"type": "integer", "minimum": -(1 << (bits - 1)), "maximum": (1 << (bits - 1)) - 1}
    return {"type": "integer", "minimum": 0, "maximum": (1 << bits) - 1}


def _c_list(bits: int, signed: bool, min_items: int = 0) -> dict:
    return {"type": "array", "items": _c_int(bits, signed), "minItems": min_items, "maxItems": tp.MAX_RANK}


_ADDRESS = {"oneOf": [_c_int(64, False),
                      {"type": "string", "pattern": "^[ \\t]*[+]?(0[xX][0-9a-fA-F_]+|[0-9_]+)[ \\t]*$",
                       "maxLength": 100}],
            "description": "a byte address: an integer, or a string in decimal or 0x-hex"}


def _enum(names, description: str, key: str = "") -> dict:
    """The short names; for a cuda.h enumeration also its full names and values (tma check also takes
    any case and optional underscores, which an enum cannot list)."""
    driver = tp.DRIVER_ENUMS.get(key)
    if driver is None:
        return {"enum": list(names), "description": description}
    _, prefix, values = driver
    spellings = list(names) + [prefix + n for n in names] + [values[n] for n in names]
    return {"enum": spellings, "description": description + f"; or cuda.h's full name ({prefix}NAME) or its "
            "value; `tma check` also takes the short name in any case, underscores optional"}


def _properties(encode: str) -> dict:
    """Each key of an `encode` document (parse_params's readers, key by key)."""
    p = {
        "encode": {"const": encode},
        "dataType": _enum(tp.DATA_TYPES, "CUtensorMapDataType, without CU_TENSOR_MAP_DATA_TYPE_", "dataType"),
        "rank": _c_int(32, False),
        "globalAddress": _ADDRESS,
        "globalDim": _c_list(64, False),
        "globalStrides": _c_list(64, False),
        "elementStrides": _c_list(32, False),
        "interleave": _enum(tp.INTERLEAVES, "CUtensorMapInterleave, without CU_TENSOR_MAP_INTERLEAVE_", "interleave"),
        "swizzle": _enum(tp.SWIZZLES, "CUtensorMapSwizzle, without CU_TENSOR_MAP_SWIZZLE_", "swizzle"),
        "l2Promotion": _enum(tp.L2_PROMOTIONS, "CUtensorMapL2promotion, without CU_TENSOR_MAP_L2_PROMOTION_", "l2Promotion"),
        "oobFill": _enum(tp.OOB_FILLS, "CUtensorMapFloatOOBfill, without CU_TENSOR_MAP_FLOAT_OOB_FILL_", "oobFill"),
        "smemAddress": _ADDRESS,
        "direction": _enum(tp.DIRECTIONS, "the copy's direction (global to shared, or back)"),
        "coordinates": _c_list(32, True),
    }
    if encode == "tiled":
        p["boxDim"] = _c_list(32, False)
    elif encode == "im2col":
        p.update(pixelBoxLowerCorner=_c_list(32, True), pixelBoxUpperCorner=_c_list(32, True),
                 channelsPerPixel=_c_int(32, False), pixelsPerColumn=_c_int(32, False))
    else:
        p.update(pixelBoxLowerCornerWidth=_c_int(32, True), pixelBoxUpperCornerWidth=_c_int(32, True),
                 channelsPerPixel=_c_int(32, False), pixelsPerColumn=_c_int(32, False),
                 mode=_enum(tp.WIDE_MODES, "CUtensorMapIm2ColWideMode, without CU_TENSOR_MAP_IM2COL_WIDE_MODE_", "mode"))
    return p


def schema() -> dict:
    variants = []
    for encode in tp.ENCODES:
        properties = _properties(encode)
        required = list(tp.document_keys(encode))
        assert set(required) | set(tp.OPTIONAL_KEYS) == set(properties), encode   # the parser's keys, exactly
        variants.append({"if": {"properties": {"encode": {"const": encode}}, "required": ["encode"]},
                         "then": {"title": f"{tp.ENCODER_NAMES[encode]} arguments", "properties": properties,
                                  "required": required, "additionalProperties": False}})
    return {"$schema": DIALECT, "$id": SCHEMA_ID, "title": "layoutproof tensor-map parameter document",
            "description": "The arguments of one cuTensorMapEncode* call (and optionally the load's destination, "
                           "direction and coordinates), as `layoutproof tma check --tensormap` reads them. Form "
                           "only: `tma check` decides which the encoder accepts.",
            "type": "object", "required": ["encode"],
            "properties": {"encode": {"enum": list(tp.ENCODES)}},
            "allOf": variants}
