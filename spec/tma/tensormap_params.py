"""The arguments of the CUDA driver's tensor-map encoders, as cuda.h names them, and how a parameter
document is read into them.

Sources: CUDA Driver API: cuTensorMapEncodeTiled, cuTensorMapEncodeIm2col, cuTensorMapEncodeIm2colWide
and the enumerations CUtensorMapDataType, CUtensorMapInterleave, CUtensorMapSwizzle,
CUtensorMapL2promotion, CUtensorMapFloatOOBfill, CUtensorMapIm2ColWideMode (cuda.h 13.0; "the encoder
documentation" below); PTX ISA 5.5.6 (Interleave layout).

A *parameter document* (the input of `layoutproof tma check`) holds one encoder call's arguments
named as in cuda.h:

    {"encode": "tiled" | "im2col" | "im2col_wide", "dataType": "BFLOAT16", "rank": 2,
     "globalAddress": 0x7f0000000000 (or "0x7f0000000000"), "globalDim": [...],
     "globalStrides": [...] (rank - 1 byte strides), "boxDim": [...] (tiled), "elementStrides": [...],
     "interleave": "NONE", "swizzle": "128B", "l2Promotion": "NONE", "oobFill": "NONE",
     im2col:      "pixelBoxLowerCorner": [...], "pixelBoxUpperCorner": [...] (rank - 2 each),
                  "channelsPerPixel", "pixelsPerColumn",
     im2col_wide: "pixelBoxLowerCornerWidth", "pixelBoxUpperCornerWidth", "channelsPerPixel",
                  "pixelsPerColumn", "mode": "W" | "W128",
     optional:    "smemAddress" (the copy's shared-memory destination, for rules tma.box.destination_alignment
                  and tma.map.smem_alignment), "direction": "global_to_shared" | "shared_to_global" (rule
                  tma.map.copy_direction), "coordinates": [...] (the copy's tensor coordinates, rank int32
                  values; rules tma.load.coord0_16B and tma.load.packed_coord0)}

A document that cannot even be written as the encoder's C arguments is MALFORMED: `parse_params` raises
SpecError (the CLI exits 2): a key missing or unknown to that encoder, a string where a number goes, a
bool, a negative value in an unsigned argument, a value that does not fit its C type, a list whose
length does not match the rank, an enum name cuda.h does not have. Expressible arguments that break a
rule (globalDim 0, boxDim 300) are VIOLATIONS: spec/tma/tensormap.py.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Optional

from spec.rule import SpecError, parse_number, rule
from spec.tma import swizzle as tma_swizzle

ENCODES = ("tiled", "im2col", "im2col_wide")
IM2COL_ENCODES = ("im2col", "im2col_wide")
ENCODER_NAMES = {"tiled": "cuTensorMapEncodeTiled", "im2col": "cuTensorMapEncodeIm2col",
                 "im2col_wide": "cuTensorMapEncodeIm2colWide"}
MAX_RANK = 5



# --- cuda.h enumerations (names without their CU_TENSOR_MAP_..._ prefix) ----------------------------
@dataclass(frozen=True)
class TmaDataType:
    name: str          # CU_TENSOR_MAP_DATA_TYPE_<name>
    driver_enum: int   # CUtensorMapDataType value
    bits: int          # element size as cuda.h's enum comment gives it ("// 2 bytes", "// 4 bits")
    is_float: bool     # a floating-point type (for the NaN out-of-bounds fill)


DATA_TYPES: dict[str, TmaDataType] = {t.name: t for t in (
    TmaDataType("UINT8", 0, 8, False),
    TmaDataType("UINT16", 1, 16, False),
    TmaDataType("UINT32", 2, 32, False),
    TmaDataType("INT32", 3, 32, False),
    TmaDataType("UINT64", 4, 64, False),
    TmaDataType("INT64", 5, 64, False),
    TmaDataType("FLOAT16", 6, 16, True),
    TmaDataType("FLOAT32", 7, 32, True),
    TmaDataType("FLOAT64", 8, 64, True),
    TmaDataType("BFLOAT16", 9, 16, True),
    TmaDataType("FLOAT32_FTZ", 10, 32, True),
    TmaDataType("TFLOAT32", 11, 32, True),
    TmaDataType("TFLOAT32_FTZ", 12, 32, True),
    # Packed sub-byte types (CUtensorMapDataType; PTX ISA 9.7.16.10 .b4x16_p64 / .b6x16_p32): globalDim
    # counts the individual U4/U6 values.
    TmaDataType("16U4_ALIGN8B", 13, 4, False),    # 16 x U4 in 8 bytes, no gaps
    TmaDataType("16U4_ALIGN16B", 14, 4, False),   # 16 x U4, 8 bytes then an 8-byte gap in smem
    TmaDataType("16U6_ALIGN16B", 15, 6, False),   # 16 x U6, 12 bytes then a 4-byte gap in smem
)}
PACKED_TYPES = ("16U4_ALIGN8B", "16U4_ALIGN16B", "16U6_ALIGN16B")
PACKED_16B_TYPES = ("16U4_ALIGN16B", "16U6_ALIGN16B")   # the two padded to 16 bytes

INTERLEAVES = ("NONE", "16B", "32B")                     # CUtensorMapInterleave
L2_PROMOTIONS = ("NONE", "L2_64B", "L2_128B", "L2_256B")  # CUtensorMapL2promotion
OOB_FILLS = ("NONE", "NAN_REQUEST_ZERO_FMA")              # CUtensorMapFloatOOBfill
WIDE_MODES = ("W", "W128")                                # CUtensorMapIm2ColWideMode
# TMA swizzle names: tma_swizzle.MODES less 96B, which has no cuda.h CUtensorMapSwizzle enumerator
# (PTX ISA tensormap.replace swizzle_mode 4 only).
SWIZZLES = tuple(name for name, m in tma_swizzle.MODES.items() if m.driver_enum is not None)
DIRECTIONS = tma_swizzle.DIRECTIONS

COMPUTE_CAPABILITY = {"sm90": (9, 0), "sm100": (10, 0), "sm103": (10, 3)}

# The cuda.h enumerations a document names, by key: (the C type, the enumerators' common prefix, short
# name -> value). A document may write an enumerator as its short name (any case, underscores optional:
# "128b", "128B_atom32B"), as cuda.h's full name ("CU_TENSOR_MAP_SWIZZLE_128B") or as its integer value;
# parse_params reads each as the short name. Values: tests/hardware/cuda_tensormap_enums.json (the
# enumerations cuda-bindings generates from cuda.h), replayed by tests/spec_tests/test_tma_enums.py.
DRIVER_ENUMS = {
    "dataType": ("CUtensorMapDataType", "CU_TENSOR_MAP_DATA_TYPE_",
                 {t.name: t.driver_enum for t in DATA_TYPES.values()}),
    "interleave": ("CUtensorMapInterleave", "CU_TENSOR_MAP_INTERLEAVE_", {"NONE": 0, "16B": 1, "32B": 2}),
    "swizzle": ("CUtensorMapSwizzle", "CU_TENSOR_MAP_SWIZZLE_",
                {name: tma_swizzle.MODES[name].driver_enum for name in SWIZZLES}),
    "l2Promotion": ("CUtensorMapL2promotion", "CU_TENSOR_MAP_L2_PROMOTION_",
                    {"NONE": 0, "L2_64B": 1, "L2_128B": 2, "L2_256B": 3}),
    "oobFill": ("CUtensorMapFloatOOBfill", "CU_TENSOR_MAP_FLOAT_OOB_FILL_", {"NONE": 0, "NAN_REQUEST_ZERO_FMA": 1}),
    "mode": ("CUtensorMapIm2ColWideMode", "CU_TENSOR_MAP_IM2COL_WIDE_MODE_", {"W": 0, "W128": 1}),
}


def fold(name: str) -> str:
    """The spelling-blind form of a name: upper case, no underscores ("128B_atom32B" and "128B_ATOM_32B"
    are one swizzle; "none" is "NONE")."""
    return name.upper().replace("_", "")


def enumerator(key: str, value, names) -> Optional[str]:
    """The short name `value` spells for the enumeration of `key` (names: its short names), or None."""
    driver = DRIVER_ENUMS.get(key)
    if driver is not None and isinstance(value, int) and not isinstance(value, bool):
        return next((n for n, v in driver[2].items() if v == value and n in names), None)
    if not isinstance(value, str) or len(value) > 64:
        return None
    text = value.strip()
    if driver is not None and text.upper().startswith(driver[1]):
        text = text[len(driver[1]):]
    wanted = fold(text)
    return next((n for n in names if fold(n) == wanted), None)


def data_type_info(name: str) -> TmaDataType:
    return DATA_TYPES[name]


def is_sm100_or_later(arch: str) -> bool:
    return COMPUTE_CAPABILITY[arch] >= (10, 0)


# --- Definitions --------------------------------------------------------------------------------------
PARAMS = rule(
    "tma.map.params", "CUDA Driver API: cuTensorMapEncodeTiled, cuTensorMapEncodeIm2col, "
    "cuTensorMapEncodeIm2colWide (parameter lists)",
    "A tensor-map parameter document holds exactly the arguments of one encoder call, named as in cuda.h; "
    "a document that cannot be written as those C arguments (missing or unknown key, wrong type, negative "
    "unsigned value, value that does not fit its C type, list length not matching the rank, unknown enum "
    "name) is malformed, not a violation.")
DATA_TYPE_TABLE = rule(
    "tma.map.data_types", "CUDA Driver API: CUtensorMapDataType (cuda.h 13.0)",
    "CUtensorMapDataType: UINT8 0 (1 byte), UINT16 1 (2), UINT32 2 (4), INT32 3 (4), UINT64 4 (8), INT64 5 "
    "(8), FLOAT16 6 (2), FLOAT32 7 (4), FLOAT64 8 (8), BFLOAT16 9 (2), FLOAT32_FTZ 10 (4), TFLOAT32 11 (4), "
    "TFLOAT32_FTZ 12 (4), 16U4_ALIGN8B 13 (4 bits), 16U4_ALIGN16B 14 (4 bits), 16U6_ALIGN16B 15 (6 bits); "
    "the floating-point types are FLOAT16/32/64, BFLOAT16, FLOAT32_FTZ, TFLOAT32, TFLOAT32_FTZ.",
    note="Element sizes are cuda.h's enum comments; for the packed types that is the size of one value "
         "in global memory (no gaps there), which is what the box and channel byte rules multiply by.")
ARCH = rule(
    "tma.map.arch", "CUDA Driver API: cuTensorMapEncodeTiled (tensor maps need compute capability 9.0 or higher)",
    "Architectures: sm90 = compute capability 9.0, sm100 = 10.0, sm103 = 10.3.")


def check_arch(arch: str) -> str:
    if arch not in COMPUTE_CAPABILITY:
        raise SpecError("arch", arch, "unknown arch; expected " + ", ".join(COMPUTE_CAPABILITY), ARCH.id)
    return arch


# --- The parameters ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class TensorMapParams:
    encode: str
    data_type: str
    rank: int
    global_address: int
    global_dim: tuple
    global_strides: tuple
    element_strides: tuple
    interleave: str
    swizzle: str
    l2_promotion: str
    oob_fill: str
    box_dim: Optional[tuple] = None                     # tiled
    pixel_box_lower_corner: Optional[tuple] = None      # im2col
    pixel_box_upper_corner: Optional[tuple] = None      # im2col
    pixel_box_lower_corner_width: Optional[int] = None  # im2col_wide
    pixel_box_upper_corner_width: Optional[int] = None  # im2col_wide
    channels_per_pixel: Optional[int] = None            # im2col, im2col_wide
    pixels_per_column: Optional[int] = None             # im2col, im2col_wide
    mode: Optional[str] = None                          # im2col_wide
    smem_address: Optional[int] = None                  # optional: the copy's destination
    direction: Optional[str] = None                     # optional: the copy's direction
    coordinates: Optional[tuple] = None                 # optional: the copy's tensor coordinates

    @property
    def dtype(self) -> TmaDataType:
        return DATA_TYPES[self.data_type]

    @property
    def is_im2col(self) -> bool:
        return self.encode in IM2COL_ENCODES


# Document key -> TensorMapParams field, for each encoder (in the C argument order).
COMMON_KEYS = {"encode": "encode", "dataType": "data_type", "rank": "rank", "globalAddress": "global_address",
               "globalDim": "global_dim", "globalStrides": "global_strides"}
TAIL_KEYS = {"elementStrides": "element_strides", "interleave": "interleave", "swizzle": "swizzle",
             "l2Promotion": "l2_promotion", "oobFill": "oob_fill"}
ENCODE_KEYS = {
    "tiled": {"boxDim": "box_dim"},
    "im2col": {"pixelBoxLowerCorner": "pixel_box_lower_corner", "pixelBoxUpperCorner": "pixel_box_upper_corner",
               "channelsPerPixel": "channels_per_pixel", "pixelsPerColumn": "pixels_per_column"},
    "im2col_wide": {"pixelBoxLowerCornerWidth": "pixel_box_lower_corner_width",
                    "pixelBoxUpperCornerWidth": "pixel_box_upper_corner_width",
                    "channelsPerPixel": "channels_per_pixel", "pixelsPerColumn": "pixels_per_column",
                    "mode": "mode"},
}
OPTIONAL_KEYS = {"smemAddress": "smem_address", "direction": "direction", "coordinates": "coordinates"}

# The rule a malformed value of each key is reported under (default: tma.map.params). Ids, not Rule
# objects: the constraint rules live in spec/tma/tensormap.py, which imports this module.
_FIELD_RULES = {
    "dataType": DATA_TYPE_TABLE.id, "rank": "tma.map.rank", "globalAddress": "tma.map.global_address_alignment",
    "globalDim": "tma.map.global_dim_range", "globalStrides": "tma.map.global_stride_range",
    "boxDim": "tma.map.box_range", "elementStrides": "tma.map.element_strides_range",
    "swizzle": tma_swizzle.TMA_SWIZZLE_MODES.id,
    "pixelBoxLowerCorner": "tma.map.im2col.corner_range", "pixelBoxUpperCorner": "tma.map.im2col.corner_range",
    "pixelBoxLowerCornerWidth": "tma.map.im2col_wide.corner_range",
    "pixelBoxUpperCornerWidth": "tma.map.im2col_wide.corner_range",
    "channelsPerPixel": "tma.map.im2col.channels_range", "pixelsPerColumn": "tma.map.im2col.pixels_range",
    "smemAddress": "tma.box.destination_alignment", "direction": "tma.map.copy_direction",
    "coordinates": "tma.load.coord0_16B",
}


def document_keys(encode: str) -> dict:
    """Document key -> field, for every key an `encode` document must hold (optional keys excluded)."""
    return {**COMMON_KEYS, **ENCODE_KEYS[encode], **TAIL_KEYS}


def _malformed(key: str, value, problem: str) -> SpecError:
    return SpecError(key, value, problem, _FIELD_RULES.get(key.split("[")[0], PARAMS.id))


def _is_integer(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _c_integer(key: str, value, bits: int, signed: bool) -> int:
    """A JSON integer that fits a C integer of `bits` bits (cuuint32_t, cuuint64_t, int)."""
    if not _is_integer(value):
        raise _malformed(key, value, "must be an integer")
    low, high = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    if value < 0 and not signed:
        raise _malformed(key, value, f"must be non-negative (cuuint{bits}_t)")
    if not low <= value <= high:
        raise _malformed(key, value, f"does not fit the C type ({'int' if signed else f'cuuint{bits}_t'})")
    return value


def _c_integer_list(key: str, value, bits: int, signed: bool, length: Optional[int], rank: int) -> tuple:
    """The list as C values; its length must be `length` (None: any, see rank_is_encodable)."""
    if not isinstance(value, list):
        raise _malformed(key, value, "must be a list of integers")
    if length is not None and len(value) != length:
        raise _malformed(key, value, f"has {len(value)} entries; rank {rank} needs {length}")
    return tuple(_c_integer(f"{key}[{i}]", v, bits, signed) for i, v in enumerate(value))


def _address(key: str, value) -> int:
    """A 64-bit byte address: a JSON integer, or a string in decimal or 0x-hex."""
    if isinstance(value, str):
        try:
            value = parse_number(value)
        except ValueError:
            raise _malformed(key, value, "not a decimal or 0x-hex number") from None
    return _c_integer(key, value, 64, signed=False)


def _enum(key: str, value, names) -> str:
    found = enumerator(key, value, names)
    if found is None:
        spelled = f" (or cuda.h's {DRIVER_ENUMS[key][1]}NAME, or its value)" if key in DRIVER_ENUMS else ""
        raise _malformed(key, value, f"expected one of {', '.join(names)}{spelled}")
    return found


def _swizzle(value) -> str:
    if isinstance(value, str) and fold(value) == "96B":
        raise _malformed("swizzle", value, "96B has no cuda.h CUtensorMapSwizzle enumerator (PTX "
                                           "tensormap.replace only); expected one of " + ", ".join(SWIZZLES))
    return _enum("swizzle", value, SWIZZLES)


def rank_is_encodable(encode: str, rank: int) -> bool:
    """tensorRank in the encoder's range: 1..MAX_RANK tiled, 3..5 for the im2col encoders."""
    return (3 if encode in IM2COL_ENCODES else 1) <= rank <= MAX_RANK


class _Document:
    """A parameter document being read for one encoder (`encode` None: the encoder is unknown, and only
    what every encoder takes is read): each getter returns the key's value as the C argument it stands
    for, or raises SpecError naming the key."""

    def __init__(self, document: dict, encode: Optional[str]):
        self.document = document
        self.encode = encode
        self.rank: Optional[int] = None          # read_rank: the list lengths depend on it
        self.lengths_checked = False

    def read_rank(self) -> int:
        """The rank. A malformed rank (left None), an unknown encoder or a rank the encoder refuses (rules
        tma.map.rank, tma.map.im2col.rank) gives the lists no length to have: they are read as given
        (their entries are still C integers or not), and the verdict is the rank's
        (spec.tma.tensormap.violations) or the malformed key's."""
        self.rank = self.unsigned("rank")
        self.lengths_checked = self.encode is not None and rank_is_encodable(self.encode, self.rank)
        return self.rank

    def entries(self, below_rank: int) -> Optional[int]:
        """The length the rank gives a list of rank - below_rank entries (None: unchecked, see above)."""
        return max(self.rank - below_rank, 0) if self.lengths_checked else None

    def value(self, key: str):
        if key not in self.document:
            encoder = ENCODER_NAMES[self.encode] if self.encode is not None else "every encoder"
            raise _malformed(key, None, f"missing (an argument of {encoder})")
        return self.document[key]

    def unsigned(self, key: str, bits: int = 32) -> int:
        return _c_integer(key, self.value(key), bits, signed=False)

    def signed(self, key: str) -> int:
        return _c_integer(key, self.value(key), 32, signed=True)

    def unsigned_list(self, key: str, bits: int, below_rank: int = 0) -> tuple:
        return _c_integer_list(key, self.value(key), bits, False, self.entries(below_rank), self.rank)

    def signed_list(self, key: str, below_rank: int = 0) -> tuple:
        return _c_integer_list(key, self.value(key), 32, True, self.entries(below_rank), self.rank)

    def enum(self, key: str, names) -> str:
        return _enum(key, self.value(key), names)


def _check_keys(document: dict, encode: str) -> None:
    allowed = set(document_keys(encode)) | set(OPTIONAL_KEYS)
    unknown = [SpecError(str(key), document[key], f"not an argument of {ENCODER_NAMES[encode]}", PARAMS.id)
               for key in document if key not in allowed]
    if unknown:
        raise DocumentErrors(unknown)


def _common_fields(d: _Document, e: _Errors) -> dict:
    """The arguments every encoder takes (the encoders' parameter lists)."""
    return dict(
        encode=d.encode,
        data_type=e.read(lambda: d.enum("dataType", DATA_TYPES)),
        rank=e.read(d.read_rank),                # before the lists, whose lengths it gives
        global_address=e.read(lambda: _address("globalAddress", d.value("globalAddress"))),
        global_dim=e.read(lambda: d.unsigned_list("globalDim", 64)),
        global_strides=e.read(lambda: d.unsigned_list("globalStrides", 64, below_rank=1)),
        element_strides=e.read(lambda: d.unsigned_list("elementStrides", 32)),
        interleave=e.read(lambda: d.enum("interleave", INTERLEAVES)),
        swizzle=e.read(lambda: _swizzle(d.value("swizzle"))),
        l2_promotion=e.read(lambda: d.enum("l2Promotion", L2_PROMOTIONS)),
        oob_fill=e.read(lambda: d.enum("oobFill", OOB_FILLS)),
    )


def _tiled_fields(d: _Document, e: _Errors) -> dict:
    return dict(box_dim=e.read(lambda: d.unsigned_list("boxDim", 32)))


def _im2col_fields(d: _Document, e: _Errors) -> dict:
    spatial = 2                    # one corner offset per spatial dimension (D, H, W): rank - 2 of them
    return dict(pixel_box_lower_corner=e.read(lambda: d.signed_list("pixelBoxLowerCorner", spatial)),
                pixel_box_upper_corner=e.read(lambda: d.signed_list("pixelBoxUpperCorner", spatial)),
                channels_per_pixel=e.read(lambda: d.unsigned("channelsPerPixel")),
                pixels_per_column=e.read(lambda: d.unsigned("pixelsPerColumn")))


def _im2col_wide_fields(d: _Document, e: _Errors) -> dict:
    return dict(pixel_box_lower_corner_width=e.read(lambda: d.signed("pixelBoxLowerCornerWidth")),
                pixel_box_upper_corner_width=e.read(lambda: d.signed("pixelBoxUpperCornerWidth")),
                channels_per_pixel=e.read(lambda: d.unsigned("channelsPerPixel")),
                pixels_per_column=e.read(lambda: d.unsigned("pixelsPerColumn")),
                mode=e.read(lambda: d.enum("mode", WIDE_MODES)))


_ENCODE_FIELDS = {"tiled": _tiled_fields, "im2col": _im2col_fields, "im2col_wide": _im2col_wide_fields}


def _optional_fields(document: dict, d: "_Document", e: _Errors) -> dict:
    fields = {}
    if "coordinates" in document:
        fields["coordinates"] = e.read(lambda: d.signed_list("coordinates"))
    if "smemAddress" in document:
        fields["smem_address"] = e.read(lambda: _address("smemAddress", document["smemAddress"]))
    if "direction" in document:
        fields["direction"] = e.read(lambda: _enum("direction", document["direction"], DIRECTIONS))
    return fields


class DocumentErrors(SpecError):
    """Every malformed key of a document, found in one reading (.errors: each key's SpecError, in the
    order of the encoder's arguments). Its message is the first error's, naming the other keys."""

    def __init__(self, errors: list):
        self.errors = list(errors)
        first = self.errors[0]
        more = [e.field_name for e in self.errors[1:]]
        problem = first.problem + (f" (and {len(more)} more: {', '.join(more)})" if more else "")
        super().__init__(first.field_name, first.value, problem, first.rule_id)

    def __reduce__(self):
        return type(self), (self.errors,)


class _Errors:
    """Collects SpecErrors: read(f) is f()'s value, or None after noting its error."""

    def __init__(self):
        self.found: list = []

    def read(self, reader):
        try:
            return reader()
        except DocumentErrors as errors:
            self.found += errors.errors
        except SpecError as error:
            self.found.append(error)
        return None


def _encode(document: dict) -> str:
    if "encode" not in document:
        raise _malformed("encode", None, "missing (expected one of " + ", ".join(ENCODES) + ")")
    return _enum("encode", document["encode"], ENCODES)


def parse_params(document: dict) -> TensorMapParams:
    """The encoder call a parameter document describes. A malformed document raises DocumentErrors (a
    SpecError) listing every malformed key at once: every key that does not depend on a malformed one
    (issue 25). With `encode` missing or unknown, the keys every encoder takes are still read (which keys
    are unknown, and the encoder's own keys, depend on it); with a malformed rank, every key is read, the
    lists without the length the rank would give them."""
    if not isinstance(document, dict):
        raise _malformed("params", document, "a parameter document is a JSON object")
    errors = _Errors()
    encode = errors.read(lambda: _encode(document))
    if encode is not None:
        errors.read(lambda: _check_keys(document, encode))
    d = _Document(document, encode)
    fields: dict = {}
    for part in (_common_fields, _ENCODE_FIELDS.get(encode)):
        if part is not None:
            fields.update(part(d, errors))
    fields.update(_optional_fields(document, d, errors))
    if errors.found:
        raise DocumentErrors(errors.found)
    return TensorMapParams(**fields)


def to_document(params: TensorMapParams) -> dict:
    """The parameter document of `params` (parse_params(to_document(p)) == p)."""
    values = asdict(params)
    keys = {**document_keys(params.encode), **OPTIONAL_KEYS}
    document = {}
    for key, field_name in keys.items():
        value = values[field_name]
        if value is None and key in OPTIONAL_KEYS:
            continue
        document[key] = list(value) if isinstance(value, tuple) else value
    return document


# --- Interleaved layouts (PTX ISA 5.5.6) ---------------------------------------------------------------
INTERLEAVE_LAYOUT = rule(
    "tma.map.interleave_layout", "PTX ISA 5.5.6 (Interleave layout); CUDA Driver API: cuTensorMapEncodeTiled "
    "(interleave)",
    "Interleave NONE is NDHWC (C innermost). Interleave 16B is NC/8DHWC8 and 32B is NC/16DHWC16: the "
    "channels are cut into slices of 16 or 32 bytes (8 two-byte or 16 four-byte channels), a slice is "
    "innermost, and the last slice is padded with zeros. The map's dimensions, innermost first, are then "
    "(slice, W, H, D, C / slice, N).",
    note="PTX ISA 5.5.6 calls the two '8 byte' and '16 byte' interleave and says C16 takes 32 bytes "
         "'assuming 4B per channel' (16 x 4 = 64); the driver documentation's reading is taken: a slice is "
         "16 bytes (16B) or 32 bytes (32B), so NC/16HWC16 holds 16 two-byte channels. The layouts are not "
         "observed on hardware here.")
INTERLEAVE_SLICE_BYTES = {"16B": 16, "32B": 32}


def interleaved_layout(n: int, c: int, spatial, element_bytes: int, interleave: str) -> dict:
    """Rule tma.map.interleave_layout: the globalDim and globalStrides (bytes) of an N x C x spatial tensor
    (spatial = W[, H[, D]]) stored in the layout `interleave` names, packed; "channels_padded" is C
    rounded up to whole slices. Raises SpecError for a layout the encoder cannot describe."""
    spatial = list(spatial)
    if interleave == "NONE":
        dims, padded = [c] + spatial + [n], c
    elif interleave in INTERLEAVE_SLICE_BYTES:
        slice_bytes = INTERLEAVE_SLICE_BYTES[interleave]
        if slice_bytes % element_bytes:
            raise SpecError("element_bytes", element_bytes, f"does not divide the {slice_bytes}-byte slice",
                            INTERLEAVE_LAYOUT.id)
        per_slice = slice_bytes // element_bytes
        slices = -(-c // per_slice)
        dims, padded = [per_slice] + spatial + [slices, n], slices * per_slice
    else:
        raise SpecError("interleave", interleave, "expected NONE, 16B or 32B", INTERLEAVE_LAYOUT.id)
    if len(dims) > MAX_RANK:
        raise SpecError("spatial", ",".join(map(str, spatial)), f"{len(dims)} dimensions; a map has at most "
                        f"{MAX_RANK}", INTERLEAVE_LAYOUT.id)
    strides, size = [], dims[0] * element_bytes
    for d in dims[1:]:
        strides.append(size)
        size *= d
    return {"globalDim": dims, "globalStrides": strides, "channels_padded": padded}

