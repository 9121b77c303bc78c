"""TMA tensor-map legality as Z3 constraints over a symbolic parameter record: the arguments of the
driver's cuTensorMapEncodeTiled / cuTensorMapEncodeIm2col / cuTensorMapEncodeIm2colWide, plus the
encode kind and the architecture.

Written from the CUDA Driver API pages of cuTensorMapEncodeTiled / Im2col / Im2colWide (cuda.h 13.0;
"DRV" below) and PTX ISA 5.5 (Tensors), independently
of spec/tma/tensormap.py, which is not imported here: the tests compare the two.

One named constraint per rule id (`constraints(record)`), each guarded by the encode kinds it applies
to, so a fuzzer can assert every rule but one and negate that one (solver/fuzz/tensormap_sampling.py,
which also holds the fuzzer's hints). Integers are Z3 Ints: every rule is linear (a product with the
element width is an If-chain over the data types).

Readings taken where those documents are terse:
  * element size of the packed types = their footprint in shared memory, bits per element: 16U4_ALIGN8B 4
    (16 x U4 in 8 bytes, no gaps), 16U4_ALIGN16B and 16U6_ALIGN16B 8 (16 values in 16 bytes with gaps;
    DRV): boxDim[0] = 128 of them then fills the 128-byte span of the 128B swizzles they are allowed.
    (spec/tma/tensormap.py counts the values' bits, 4 and 6; the two agree on every map whose boxDim[0] and
    channelsPerPixel are 128, the only legal values for those types);
  * "dim 0 stride must be 1 without interleave" is its own rule, tma.map.element_strides_inner, beside
    tma.map.element_strides_range ([1, 8]): DRV calls elementStrides[0] ignored, so the encoder accepts
    other values (DRIVER_IGNORED; spec/tma/tensormap.py makes it a warning);
  * "channelsPerPixel <= 256 (128 for packed 16B types)": exactly 128 for those types, as boxDim[0] is
    exactly 128 for them in tiled maps (spec/tma/tensormap.py quotes DRV: "must be 128");
  * the swizzle-span rule applies without interleave (as section 5 states it); the 16-byte box-row rule,
    stated "without interleave", holds with interleave too: the H100's driver refused every interleaved
    box whose row is not a multiple of 16 bytes (162 cases, none accepted, in
    tests/hardware/tensormap_encode_sm90.json.gz);
  * im2col bounding box along spatial dim s (globalDim[s+1], corners[s], W first as globalDim):
    from lowerCorner[s] to globalDim[s+1] - 1 + upperCorner[s]; "non-zero area" = every extent
    globalDim[s+1] + upper[s] - lower[s] >= 1 (for im2col_wide: the W corners);
  * the packed-type swizzle list holds for every encode kind (it follows from the packing in shared
    memory); 16U6's 128B_ATOM_64B ("store only") is accepted by the encoder, which cannot see the
    direction;
  * a rule reads only entries the document lists (slots below the rank);
  * the size rules (tma.map.box_bytes, tma.map.box_bytes_loaded) count a tiled box only when every
    elementStrides entry is a traversal stride, in [1, 8]: PTX 5.5.3.2 gives ceil(boxDim / stride) for
    those; a load with another stride does not exist (tma.map.element_strides_range, which the driver
    enforces, refuses it), so the count has nothing to say about it;
  * 96B (PTX tensormap.replace swizzle_mode 4, sm_103a; no cuda.h enumerator) is legal only on sm103,
    the three 128B_ATOM_* sub-modes on sm100/sm103 (PTX 5.5.7 Table 14; DRV CUtensorMapSwizzle); the
    packed data types on sm100/sm103 (DRV CUtensorMapDataType).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import z3

from solver.model.field import between as _between, is_one_of as _is
from solver.model.vocab import ARCHES, TMA_SPAN_BYTES

# --- Vocabulary (codes are indices; cuda.h values where cuda.h has them) -------------------------------
ENCODES = ("tiled", "im2col", "im2col_wide")
# CUtensorMapDataType, in cuda.h order (the index is the enum value)
DATA_TYPES = ("UINT8", "UINT16", "UINT32", "INT32", "UINT64", "INT64", "FLOAT16", "FLOAT32", "FLOAT64",
              "BFLOAT16", "FLOAT32_FTZ", "TFLOAT32", "TFLOAT32_FTZ", "16U4_ALIGN8B", "16U4_ALIGN16B",
              "16U6_ALIGN16B")
STORAGE_BITS = {"UINT8": 8, "UINT16": 16, "UINT32": 32, "INT32": 32, "UINT64": 64, "INT64": 64,
                "FLOAT16": 16, "FLOAT32": 32, "FLOAT64": 64, "BFLOAT16": 16, "FLOAT32_FTZ": 32,
                "TFLOAT32": 32, "TFLOAT32_FTZ": 32,
                "16U4_ALIGN8B": 4, "16U4_ALIGN16B": 8, "16U6_ALIGN16B": 8}       # packed: see above
FLOAT_TYPES = ("FLOAT16", "FLOAT32", "FLOAT64", "BFLOAT16", "FLOAT32_FTZ", "TFLOAT32", "TFLOAT32_FTZ")
PACKED_16B = ("16U4_ALIGN16B", "16U6_ALIGN16B")
PACKED = ("16U4_ALIGN8B",) + PACKED_16B
# CUtensorMapSwizzle in cuda.h order, then 96B (code 7 here: cuda.h has no enumerator for it)
SWIZZLES = ("NONE", "32B", "64B", "128B", "128B_ATOM_32B", "128B_ATOM_32B_FLIP_8B", "128B_ATOM_64B", "96B")
ENCODER_SWIZZLES = SWIZZLES[:-1]      # the ones cuda.h can pass to an encoder (not 96B)
ATOM_SUBMODES = ("128B_ATOM_32B", "128B_ATOM_32B_FLIP_8B", "128B_ATOM_64B")
INTERLEAVES = ("NONE", "16B", "32B")
L2_PROMOTIONS = ("NONE", "L2_64B", "L2_128B", "L2_256B")
OOB_FILLS = ("NONE", "NAN_REQUEST_ZERO_FMA")
WIDE_MODES = ("W", "W128")
# The copy's direction, when a document names one (optional key "direction"; code 0: not given)
DIRECTIONS = ("none", "global_to_shared", "shared_to_global")

MAX_RANK = 5
SLOTS = MAX_RANK + 1        # one slot more than a legal rank, so that a rank-6 map can be written down
CORNER_SLOTS = SLOTS - 2
U32, U64 = 1 << 32, 1 << 64
I32_MIN, I32_MAX = -(1 << 31), (1 << 31) - 1


def code(names: tuple, name: str) -> int:
    return names.index(name)


# --- The symbolic record -----------------------------------------------------------------------------
@dataclass
class Record:
    """Every argument of the three encoders (slots past the rank are ignored), as Z3 Ints."""
    encode: z3.ArithRef
    arch: z3.ArithRef
    rank: z3.ArithRef
    data_type: z3.ArithRef
    global_address: z3.ArithRef
    global_dim: list
    global_strides: list            # globalStrides[i] is the byte stride of dimension i + 1
    box_dim: list
    element_strides: list
    interleave: z3.ArithRef
    swizzle: z3.ArithRef
    l2_promotion: z3.ArithRef
    oob_fill: z3.ArithRef
    lower_corner: list              # im2col, one per spatial dimension (W first)
    upper_corner: list
    lower_corner_w: z3.ArithRef     # im2col_wide
    upper_corner_w: z3.ArithRef
    channels_per_pixel: z3.ArithRef
    pixels_per_column: z3.ArithRef
    mode: z3.ArithRef               # im2col_wide: W or W128
    has_smem_address: z3.ArithRef   # 1 when the document gives the copy's destination (optional keys)
    smem_address: z3.ArithRef
    direction: z3.ArithRef          # DIRECTIONS code
    has_coordinates: z3.ArithRef    # 1 when the document gives the copy's tensor coordinates
    coordinate0: z3.ArithRef        # coordinates[0] (the others are 0 in the documents made here)
    variables: dict = field(default_factory=dict, repr=False)   # name -> Int, for documents and tests


def symbolic_record(prefix: str = "") -> Record:
    made: dict = {}

    def one(name):
        made[name] = z3.Int(prefix + name)
        return made[name]

    def many(name, count):
        return [one(f"{name}[{i}]") for i in range(count)]

    return Record(one("encode"), one("arch"), one("rank"), one("dataType"), one("globalAddress"),
                  many("globalDim", SLOTS), many("globalStrides", SLOTS - 1), many("boxDim", SLOTS),
                  many("elementStrides", SLOTS), one("interleave"), one("swizzle"), one("l2Promotion"),
                  one("oobFill"), many("pixelBoxLowerCorner", CORNER_SLOTS),
                  many("pixelBoxUpperCorner", CORNER_SLOTS), one("pixelBoxLowerCornerWidth"),
                  one("pixelBoxUpperCornerWidth"), one("channelsPerPixel"), one("pixelsPerColumn"),
                  one("mode"), one("hasSmemAddress"), one("smemAddress"), one("direction"),
                  one("hasCoordinates"), one("coordinates[0]"), made)




def domain(r: Record) -> list:
    """What the C types allow (not rules): enum codes, cuuint32/cuuint64/int ranges, rank 0..SLOTS."""
    enums = [(r.encode, ENCODES), (r.arch, ARCHES), (r.data_type, DATA_TYPES), (r.interleave, INTERLEAVES),
             (r.swizzle, SWIZZLES), (r.l2_promotion, L2_PROMOTIONS), (r.oob_fill, OOB_FILLS),
             (r.mode, WIDE_MODES), (r.direction, DIRECTIONS)]
    facts = [_between(var, 0, len(names) - 1) for var, names in enums]
    facts.append(_between(r.has_smem_address, 0, 1))
    facts.append(_between(r.has_coordinates, 0, 1))
    facts.append(_between(r.coordinate0, -(1 << 31), (1 << 31) - 1))
    facts.append(_between(r.smem_address, 0, U32 - 1))
    facts.append(_between(r.rank, 0, SLOTS))
    facts.append(_between(r.global_address, 0, U64 - 1))
    facts += [_between(x, 0, U64 - 1) for x in r.global_dim + r.global_strides]
    facts += [_between(x, 0, U32 - 1) for x in r.box_dim + r.element_strides
              + [r.channels_per_pixel, r.pixels_per_column]]
    facts += [_between(x, I32_MIN, I32_MAX) for x in r.lower_corner + r.upper_corner
              + [r.lower_corner_w, r.upper_corner_w]]
    return facts


# --- Terms the rules share ---------------------------------------------------------------------------


def _data_type_is(r: Record, *chosen: str):
    return _is(r.data_type, DATA_TYPES, *chosen)


def _swizzle_is(r: Record, *chosen: str):
    return _is(r.swizzle, SWIZZLES, *chosen)


def _interleave_is(r: Record, *chosen: str):
    return _is(r.interleave, INTERLEAVES, *chosen)


def _arch_is(r: Record, *chosen: str):
    return _is(r.arch, ARCHES, *chosen)


def _bits_of(r: Record, count):
    """count * (storage bits of one element): an If-chain over the data types (linear)."""
    term = z3.IntVal(0)
    for name in reversed(DATA_TYPES):
        term = z3.If(r.data_type == code(DATA_TYPES, name), count * STORAGE_BITS[name], term)
    return term


def _span_bits(r: Record):
    """8 * the swizzle span in bytes (32/64/96; 128 for every 128B mode); 0 for NONE."""
    term = z3.IntVal(0)
    for name, span in TMA_SPAN_BYTES.items():
        term = z3.If(r.swizzle == code(SWIZZLES, name), 8 * span, term)
    return term


def _listed(r: Record, i: int):
    """Entry i of the per-dimension lists is in the document (i < rank)."""
    return r.rank > i


def _each_dim(r: Record, predicate: Callable[[int], object]):
    """predicate(i) for every dimension i < rank."""
    return z3.And(*[z3.Implies(_listed(r, i), predicate(i)) for i in range(SLOTS)])


def _each_stride(r: Record, predicate: Callable[[int], object]):
    """predicate(i) for every globalStrides entry i < rank - 1."""
    return z3.And(*[z3.Implies(i < r.rank - 1, predicate(i)) for i in range(SLOTS - 1)])


def _each_spatial_dim(r: Record, predicate: Callable[[int], object]):
    """predicate(s) for every im2col spatial dimension s < rank - 2 (globalDim[s + 1])."""
    return z3.And(*[z3.Implies(s < r.rank - 2, predicate(s)) for s in range(CORNER_SLOTS)])


def _multiple(x, of: int):
    return x % of == 0


def _aligned_for_global(r: Record, x):
    """x is a multiple of 16 bytes; of 32 with interleave 32B or a 16-byte packed type (the global
    address and stride alignment)."""
    wide = z3.Or(_interleave_is(r, "32B"), _data_type_is(r, *PACKED_16B))
    return z3.If(wide, _multiple(x, 32), _multiple(x, 16))


def _swizzled_without_interleave(r: Record):
    return z3.And(_interleave_is(r, "NONE"), z3.Not(_swizzle_is(r, "NONE")))


# --- The rules ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MapRule:
    id: str
    encodes: tuple             # the encode kinds it applies to
    source: str
    statement: str
    predicate: Callable = field(repr=False, compare=False)


# The encode kinds a rule applies to
ALL = ENCODES
TILED, IM2COL, WIDE = ("tiled",), ("im2col",), ("im2col_wide",)
IM2COL_BOTH = ("im2col", "im2col_wide")
DRV = "CUDA Driver API cuTensorMapEncode* (cuda.h 13.0)"
RULES: dict = {}


def _rule(id: str, encodes: tuple, source: str, statement: str):
    def register(predicate):
        RULES[id] = MapRule(id, encodes, source, statement, predicate)
        return predicate
    return register


@_rule("tma.map.rank", ALL, "CUDA Driver API cuTensorMapEncodeTiled (tensorRank); PTX 5.5.1",
       "tensorRank is in [1, 5].")
def _rank(r):
    return _between(r.rank, 1, MAX_RANK)


@_rule("tma.map.global_address_alignment", ALL, DRV,
       "globalAddress is 16-byte aligned; 32-byte with interleave 32B or 16U4_ALIGN16B / 16U6_ALIGN16B.")
def _global_address_alignment(r):
    return _aligned_for_global(r, r.global_address)


@_rule("tma.map.global_dim_range", ALL, DRV, "1 <= globalDim[i] <= 2^32 for every dimension.")
def _global_dim_range(r):
    return _each_dim(r, lambda i: _between(r.global_dim[i], 1, 1 << 32))


@_rule("tma.map.packed_global_dim", ALL, DRV,
       "globalDim[0] is a multiple of 128 for 16U4_ALIGN16B / 16U6_ALIGN16B and of 2 for 16U4_ALIGN8B.")
def _packed_global_dim(r):
    return z3.Implies(_listed(r, 0), z3.And(
        z3.Implies(_data_type_is(r, *PACKED_16B), _multiple(r.global_dim[0], 128)),
        z3.Implies(_data_type_is(r, "16U4_ALIGN8B"), _multiple(r.global_dim[0], 2))))


@_rule("tma.map.global_stride_alignment", ALL, DRV,
       "globalStrides[0 .. rank-2] are multiples of 16 (32 with interleave 32B or the 16-byte packed types).")
def _global_stride_alignment(r):
    return _each_stride(r, lambda i: _aligned_for_global(r, r.global_strides[i]))


@_rule("tma.map.global_stride_range", ALL, DRV, "globalStrides[0 .. rank-2] are below 2^40.")
def _global_stride_range(r):
    return _each_stride(r, lambda i: r.global_strides[i] < (1 << 40))


@_rule("tma.map.element_strides_range", ALL, DRV, "elementStrides[i] is in [1, 8].")
def _element_strides_range(r):
    return _each_dim(r, lambda i: _between(r.element_strides[i], 1, 8))


@_rule("tma.map.element_strides_inner", ALL,
       "PTX 5.5.3.2 (traversal stride); CUDA Driver API cuTensorMapEncodeTiled (elementStrides)",
       "Without interleave elementStrides[0] is 1 (TMA has no traversal stride along dimension 0).")
def _element_strides_inner(r):
    return z3.Implies(z3.And(_listed(r, 0), _interleave_is(r, "NONE")), r.element_strides[0] == 1)


@_rule("tma.map.interleave_swizzle", ALL, DRV + "; PTX 5.5.6", "Interleave 32B requires swizzle 32B.")
def _interleave_swizzle(r):
    return z3.Implies(_interleave_is(r, "32B"), _swizzle_is(r, "32B"))


@_rule("tma.map.interleave_rank", ALL, DRV + "; PTX 5.5.6",
       "Interleaved layouts need rank >= 3 (3D, 4D and 5D only).")
def _interleave_rank(r):
    return z3.Implies(z3.Not(_interleave_is(r, "NONE")), r.rank >= 3)


@_rule("tma.map.interleave_dtype", ALL, DRV, "16U6_ALIGN16B requires interleave NONE.")
def _interleave_dtype(r):
    return z3.Implies(_data_type_is(r, "16U6_ALIGN16B"), _interleave_is(r, "NONE"))


@_rule("tma.map.oob_nan_dtype", ALL, DRV,
       "oobFill NAN_REQUEST_ZERO_FMA only for floating-point types (never the packed types).")
def _oob_nan_dtype(r):
    return z3.Implies(r.oob_fill == code(OOB_FILLS, "NAN_REQUEST_ZERO_FMA"), _data_type_is(r, *FLOAT_TYPES))


@_rule("tma.map.box_range", TILED, DRV, "boxDim[i] is in [1, 256] for every dimension.")
def _box_range(r):
    return _each_dim(r, lambda i: _between(r.box_dim[i], 1, 256))


@_rule("tma.map.box_inner_16B", TILED, DRV + "; H100 driver (tests/hardware/tensormap_encode_sm90.json.gz)",
       "boxDim[0] * element size is a multiple of 16 bytes, with or without interleave.")
def _box_inner_16B(r):
    return z3.Implies(_listed(r, 0), _multiple(_bits_of(r, r.box_dim[0]), 128))


@_rule("tma.map.box_swizzle_span", TILED, DRV,
       "Without interleave and with a swizzle, boxDim[0] * element size is at most the swizzle span "
       "(32, 64, 96; 128 for every 128B mode).")
def _box_swizzle_span(r):
    return z3.Implies(z3.And(_listed(r, 0), _swizzled_without_interleave(r)),
                      _bits_of(r, r.box_dim[0]) <= _span_bits(r))


@_rule("tma.map.packed_box", TILED, DRV, "16U4_ALIGN16B / 16U6_ALIGN16B need boxDim[0] == 128.")
def _packed_box(r):
    return z3.Implies(z3.And(_listed(r, 0), _data_type_is(r, *PACKED_16B)), r.box_dim[0] == 128)


@_rule("tma.map.packed_swizzle", ALL, DRV,
       "16U4_ALIGN16B: swizzle NONE, 128B or 128B_ATOM_32B; 16U6_ALIGN16B: those or 128B_ATOM_64B "
       "(the last for stores only, which the encoder cannot see).")
def _packed_swizzle(r):
    return z3.And(z3.Implies(_data_type_is(r, "16U4_ALIGN16B"), _swizzle_is(r, "NONE", "128B", "128B_ATOM_32B")),
                  z3.Implies(_data_type_is(r, "16U6_ALIGN16B"),
                             _swizzle_is(r, "NONE", "128B", "128B_ATOM_32B", "128B_ATOM_64B")))


@_rule("tma.map.dtype_arch", ALL, "CUDA Driver API CUtensorMapDataType (cuda.h 13.0)",
       "The packed types 16U4_ALIGN8B, 16U4_ALIGN16B, 16U6_ALIGN16B need sm100 or sm103.")
def _dtype_arch(r):
    return z3.Implies(_data_type_is(r, *PACKED), _arch_is(r, "sm100", "sm103"))


@_rule("tma.map.swizzle_arch", ALL,
       "PTX 5.5.7 Table 14; CUDA Driver API CUtensorMapSwizzle; PTX tensormap.replace (96B: sm_103a)",
       "The 128B_ATOM_* sub-modes need sm100 or sm103; 96B needs sm103.")
def _swizzle_arch(r):
    return z3.And(z3.Implies(_swizzle_is(r, *ATOM_SUBMODES), _arch_is(r, "sm100", "sm103")),
                  z3.Implies(_swizzle_is(r, "96B"), _arch_is(r, "sm103")))


@_rule("tma.map.im2col.rank", IM2COL_BOTH,
       "CUDA Driver API cuTensorMapEncodeIm2col, cuTensorMapEncodeIm2colWide (tensorRank)",
       "Rank is in [3, 5].")
def _im2col_rank(r):
    return _between(r.rank, 3, MAX_RANK)


def _corner_bound(r):
    """2^15 for rank 3, 2^7 for rank 4, 2^4 for rank 5: corners lie in [-bound, bound - 1]."""
    return z3.If(r.rank <= 3, 1 << 15, z3.If(r.rank == 4, 1 << 7, 1 << 4))


@_rule("tma.map.im2col.corner_range", IM2COL,
       "CUDA Driver API cuTensorMapEncodeIm2col (pixelBoxLowerCorner, pixelBoxUpperCorner); PTX 5.5.4.1",
       "Each spatial corner lies in [-2^15, 2^15-1] (rank 3), [-2^7, 2^7-1] (rank 4), [-2^4, 2^4-1] (rank 5).")
def _im2col_corner_range(r):
    bound = _corner_bound(r)
    return _each_spatial_dim(r, lambda s: z3.And(r.lower_corner[s] >= -bound, r.lower_corner[s] <= bound - 1,
                                                 r.upper_corner[s] >= -bound, r.upper_corner[s] <= bound - 1))


def _signed_32(x):
    """x wrapped to a signed 32-bit integer (the H100 driver adds in 32 bits)."""
    return (x + (1 << 31)) % (1 << 32) - (1 << 31)


def _spatial_dim(r: Record, s: int):
    """The globalDim entry the driver pairs with spatial corner s: s + 1, or s with interleave 16B / 32B."""
    return z3.If(_interleave_is(r, "NONE"), r.global_dim[s + 1], r.global_dim[s])


@_rule("tma.map.im2col.box_area", IM2COL_BOTH,
       "CUDA Driver API cuTensorMapEncodeIm2col, cuTensorMapEncodeIm2colWide (pixelBoxLowerCorner, "
       "pixelBoxUpperCorner); H100 driver (tests/hardware/driver_probe_sm90.json.gz)",
       "The bounding box has non-zero area as the driver sums it: per spatial corner, signed-32-bit "
       "(globalDim + upperCorner) - lowerCorner >= 1, the corner paired with globalDim[s + 1] (globalDim[s] "
       "with interleave); im2col_wide: the W corners.")
def _im2col_box_area(r):
    def extent_positive(s, upper, lower):
        return _signed_32(_spatial_dim(r, s) + upper) - lower >= 1
    wide = z3.Implies(r.rank >= 3, extent_positive(0, r.upper_corner_w, r.lower_corner_w))
    narrow = _each_spatial_dim(r, lambda s: extent_positive(s, r.upper_corner[s], r.lower_corner[s]))
    return z3.If(r.encode == code(ENCODES, "im2col_wide"), wide, narrow)


@_rule("tma.map.im2col.channels_range", IM2COL_BOTH, DRV,
       "channelsPerPixel is in [1, 256]; 128 for 16U4_ALIGN16B / 16U6_ALIGN16B.")
def _im2col_channels_range(r):
    return z3.And(_between(r.channels_per_pixel, 1, 256),
                  z3.Implies(_data_type_is(r, *PACKED_16B), r.channels_per_pixel == 128))


@_rule("tma.map.im2col.pixels_range", IM2COL_BOTH, DRV + "; H100 driver",
       "pixelsPerColumn is in [1, 1024], in im2col_wide mode W128 too (the H100's driver checks it there).")
def _im2col_pixels_range(r):
    return _between(r.pixels_per_column, 1, 1024)


# --- Limits the H100's driver showed (tests/hardware/tensormap_encode_sm90.json.gz) -----------------------
H100_DRIVER = "H100 driver 580.159.04 (tests/hardware/tensormap_encode_sm90.json.gz)"
MAX_LOAD_BITS = 228 * 1024 * 8


@_rule("tma.map.im2col.channels_16B", IM2COL_BOTH, H100_DRIVER,
       "channelsPerPixel * element size is a multiple of 16 bytes.")
def _im2col_channels_16B(r):
    # packed types take exactly 128 channels (channels_range): whole 16-byte chunks by construction
    return z3.Or(_data_type_is(r, *PACKED), _multiple(_bits_of(r, r.channels_per_pixel), 128))


@_rule("tma.map.im2col.spatial_dim_range", WIDE, H100_DRIVER,
       "im2col_wide: the spatial globalDim entries after W (H, D) are at most 2^31 - 1.")
def _im2col_spatial_dim_range(r):
    return _each_spatial_dim(r, lambda s: z3.Implies(s >= 1, _spatial_dim(r, s) <= (1 << 31) - 1))


def _strides_traversable(r: Record):
    """Every listed elementStrides entry is a traversal stride, in [1, 8] (rule tma.map.element_strides_range).
    The size rules count only such maps: a load with a stride of 0 or above 8 does not exist, so what
    floor or ceil(boxDim / stride) would give for it is not defined (PTX 5.5.3.2 states the count for
    strides 1..8; the driver refuses the others on their range first)."""
    return _each_dim(r, lambda i: _between(r.element_strides[i], 1, 8))


def _loaded_rows(r: Record, round_up: bool):
    """Rows of a tiled load: the product over dimensions 1 .. rank-1 of boxDim / elementStrides, rounded
    up (what the load brings) or down (what the H100's driver counts); strides 1..8 expanded, so each
    factor is a division by a constant (the size rules apply only when every stride is in 1..8:
    _strides_traversable)."""
    rows = z3.IntVal(1)
    for i in range(1, SLOTS):
        count = r.box_dim[i]
        for stride in range(2, 9):
            divided = (r.box_dim[i] + stride - 1) / stride if round_up else r.box_dim[i] / stride
            count = z3.If(r.element_strides[i] == stride, divided, count)
        rows = rows * z3.If(_listed(r, i), count, 1)
    return rows


def _tiled_counted_bits(r: Record):
    """What the driver counts for a tiled box: every dimension divided by its stride, rounded down
    (dimension 0 too, though the load ignores elementStrides[0])."""
    first = r.box_dim[0]
    for stride in range(2, 9):
        first = z3.If(r.element_strides[0] == stride, r.box_dim[0] / stride, first)
    return _bits_of(r, first) * _loaded_rows(r, round_up=False)


@_rule("tma.map.box_bytes", ALL, H100_DRIVER,
       "The driver's size check, at most 228 KiB: tiled prod floor(boxDim[i] / elementStrides[i]) over every i "
       "(dimension 0 too) * element size, counted only when every elementStrides[i] is in [1, 8]; im2col "
       "channelsPerPixel * pixelsPerColumn * element size.")
def _box_bytes(r):
    im2col_bits = _bits_of(r, r.channels_per_pixel) * r.pixels_per_column
    tiled = z3.Implies(_strides_traversable(r), _tiled_counted_bits(r) <= MAX_LOAD_BITS)
    return z3.If(r.encode == code(ENCODES, "tiled"), tiled, im2col_bits <= MAX_LOAD_BITS)


@_rule("tma.map.box_bytes_loaded", TILED, "PTX 5.5.3 (traversal strides); H100 driver",
       "A tiled box that passes the driver's floor count also brings at most 228 KiB: boxDim[0] * prod "
       "ceil(boxDim[i] / elementStrides[i]) * element size (counted only when every elementStrides[i] is in "
       "[1, 8]).")
def _box_bytes_loaded(r):
    inner = _bits_of(r, r.box_dim[0])
    counted_over = _tiled_counted_bits(r) > MAX_LOAD_BITS
    return z3.Implies(_strides_traversable(r),
                      z3.Or(counted_over, inner * _loaded_rows(r, round_up=True) <= MAX_LOAD_BITS))


@_rule("tma.map.im2col.channel_span", IM2COL_BOTH, DRV,
       "Without interleave and with a swizzle, channelsPerPixel * element size is at most the swizzle span.")
def _im2col_channel_span(r):
    return z3.Implies(_swizzled_without_interleave(r), _bits_of(r, r.channels_per_pixel) <= _span_bits(r))


@_rule("tma.map.im2col_wide.arch", WIDE, "CUDA Driver API cuTensorMapEncodeIm2colWide",
       "im2col_wide needs compute capability 10.0 or later (sm100, sm103).")
def _wide_arch(r):
    return _arch_is(r, "sm100", "sm103")


@_rule("tma.map.im2col_wide.swizzle", WIDE, "CUDA Driver API cuTensorMapEncodeIm2colWide (swizzle); "
       "PTX 5.5.5",
       "im2col_wide swizzle is 64B, 128B or 128B_ATOM_32B.")
def _wide_swizzle(r):
    return _swizzle_is(r, "64B", "128B", "128B_ATOM_32B")


@_rule("tma.map.im2col_wide.interleave", WIDE,
       "CUDA Driver API cuTensorMapEncodeIm2colWide (interleave); PTX 5.5.6",
       "im2col_wide has no interleave.")
def _wide_interleave(r):
    return _interleave_is(r, "NONE")


@_rule("tma.map.im2col_wide.corner_range", WIDE,
       "CUDA Driver API cuTensorMapEncodeIm2colWide (pixelBoxLowerCornerWidth, pixelBoxUpperCornerWidth)",
       "pixelBoxLowerCornerWidth and pixelBoxUpperCornerWidth lie in [-2^15, 2^15-1].")
def _wide_corner_range(r):
    # the sm90 driver holds the width corners to the im2col range of the rank (H100 driver)
    bound = z3.If(_arch_is(r, "sm90"), _corner_bound(r), 1 << 15)
    return z3.And(_between(r.lower_corner_w, -bound, bound - 1), _between(r.upper_corner_w, -bound, bound - 1))


# --- What the copy instruction adds (optional document keys smemAddress, direction) ---------------------
COPY_ALIGNMENT = {"32B": 256, "64B": 512, "96B": 256}       # the swizzle's repeat; the 128B modes: 1024


@_rule("tma.box.destination_alignment", ALL,
       "CUDA C++ Programming Guide (Tensor Memory Access); H100 (tests/hardware/tma_loads_sm90.json.gz)",
       "A given shared-memory destination is 128-byte aligned (the H100 traps on 8 .. 96 bytes past).")
def _destination_alignment(r):
    return z3.Implies(r.has_smem_address == 1, r.smem_address % 128 == 0)


@_rule("tma.map.smem_alignment", ALL, "PTX 5.5.7 (the repeat boundary)",
       "With a swizzle, a given shared-memory destination is on the swizzle's repeat: 256 bytes for 32B (and "
       "96B), 512 for 64B, 1024 for every 128B mode.")
def _smem_alignment(r):
    alignment = z3.IntVal(1024)
    for name, bytes_ in COPY_ALIGNMENT.items():
        alignment = z3.If(r.swizzle == code(SWIZZLES, name), bytes_, alignment)
    swizzled = z3.Not(_swizzle_is(r, "NONE"))
    return z3.Implies(z3.And(r.has_smem_address == 1, swizzled), r.smem_address % alignment == 0)


@_rule("tma.load.coord0_16B", TILED, "H100 (tests/hardware/tma_loads_sm90.json.gz)",
       "A tiled copy's coordinates[0] times the element size is a multiple of 16 bytes (else it traps); the "
       "packed types are left to tma.load.packed_coord0.")
def _coord0_16B(r):
    whole_bytes = z3.Not(_data_type_is(r, *PACKED))
    return z3.Implies(z3.And(r.has_coordinates == 1, whole_bytes), _multiple(_bits_of(r, r.coordinate0), 128))


@_rule("tma.load.packed_coord0", ALL, "PTX 5.5.1.1 (sub-byte types)",
       "A copy of 16U4_ALIGN16B / 16U6_ALIGN16B data starts at a coordinates[0] that is a multiple of 128.")
def _packed_coord0(r):
    return z3.Implies(z3.And(r.has_coordinates == 1, _data_type_is(r, *PACKED_16B)), _multiple(r.coordinate0, 128))


@_rule("tma.map.copy_direction", ALL,
       "PTX 5.5.7 Table 14; CUDA Driver API CUtensorMapSwizzle, CUtensorMapDataType",
       "A given copy direction fits the map: 128B_ATOM_32B_FLIP_8B and 16U4_ALIGN16B load only "
       "(global -> shared); 16U6_ALIGN16B with 128B_ATOM_64B stores only (shared -> global).")
def _copy_direction(r):
    loads, stores = code(DIRECTIONS, "global_to_shared"), code(DIRECTIONS, "shared_to_global")
    load_only = z3.Or(_swizzle_is(r, "128B_ATOM_32B_FLIP_8B"), _data_type_is(r, "16U4_ALIGN16B"))
    store_only = z3.And(_data_type_is(r, "16U6_ALIGN16B"), _swizzle_is(r, "128B_ATOM_64B"))
    return z3.And(z3.Implies(load_only, r.direction != stores), z3.Implies(store_only, r.direction != loads))


RULE_IDS = tuple(RULES)
# Documented rules the driver's encoder does not enforce (it accepts the arguments; the problem shows
# at run time): breaking them gives a document the encoder takes.
DRIVER_IGNORED = frozenset({"tma.map.element_strides_inner", "tma.map.smem_alignment", "tma.map.box_bytes_loaded",
                            "tma.map.copy_direction", "tma.box.destination_alignment", "tma.load.coord0_16B",
                            "tma.load.packed_coord0"})
# ... and those the H100's driver (sm90) was seen not to enforce.
DRIVER_IGNORED_ON = {"sm90": frozenset({"tma.map.interleave_swizzle", "tma.map.im2col_wide.arch",
                                        "tma.map.im2col_wide.swizzle", "tma.map.im2col_wide.interleave"})}


def driver_ignores(rule_id: str, arch: str) -> bool:
    return rule_id in DRIVER_IGNORED or rule_id in DRIVER_IGNORED_ON.get(arch, frozenset())


RANK_RULES = ("tma.map.rank", "tma.map.im2col.rank")


def _rank_encodable(r: Record):
    """tensorRank in the encoder's range. Outside it the arrays have no length the driver would read, so
    only the rank rules speak (a refused rank is the whole verdict)."""
    return z3.And(r.rank >= z3.If(r.encode == code(ENCODES, "tiled"), 1, 3), r.rank <= MAX_RANK)


def constraints(r: Record) -> dict:
    """rule id -> the Z3 Bool that holds when the record obeys the rule (vacuously true for the encode
    kinds it does not apply to, and for every rule but the rank rules when the rank is not encodable)."""
    encodable = _rank_encodable(r)

    def applies(rule: MapRule):
        kinds = _is(r.encode, ENCODES, *rule.encodes)
        return kinds if rule.id in RANK_RULES else z3.And(kinds, encodable)
    return {rule.id: z3.Implies(applies(rule), rule.predicate(r)) for rule in RULES.values()}


def rules_for(encode: str) -> tuple:
    return tuple(rule.id for rule in RULES.values() if encode in rule.encodes)


# --- Documents (the `tma check` parameter format of docs/CLI.md) ------------------------------------------
def _names_of(r: Record):
    """(document key, record term, vocabulary or None) of the scalar fields every encode has."""
    return (("dataType", r.data_type, DATA_TYPES), ("rank", r.rank, None),
            ("globalAddress", r.global_address, None), ("interleave", r.interleave, INTERLEAVES),
            ("swizzle", r.swizzle, SWIZZLES), ("l2Promotion", r.l2_promotion, L2_PROMOTIONS),
            ("oobFill", r.oob_fill, OOB_FILLS))


def _lists_of(r: Record, rank: int, encode: str):
    """(document key, record terms of the entries the document lists)."""
    lists = [("globalDim", r.global_dim[:rank]), ("globalStrides", r.global_strides[:max(rank - 1, 0)]),
             ("elementStrides", r.element_strides[:rank])]
    if encode == "tiled":
        lists.append(("boxDim", r.box_dim[:rank]))
    if encode == "im2col":
        spatial = max(rank - 2, 0)
        lists += [("pixelBoxLowerCorner", r.lower_corner[:spatial]),
                  ("pixelBoxUpperCorner", r.upper_corner[:spatial])]
    return lists


def _extras_of(r: Record, encode: str):
    """(document key, record term, vocabulary or None) of the im2col scalars."""
    if encode == "im2col":
        return (("channelsPerPixel", r.channels_per_pixel, None), ("pixelsPerColumn", r.pixels_per_column, None))
    if encode == "im2col_wide":
        return (("pixelBoxLowerCornerWidth", r.lower_corner_w, None),
                ("pixelBoxUpperCornerWidth", r.upper_corner_w, None),
                ("channelsPerPixel", r.channels_per_pixel, None), ("pixelsPerColumn", r.pixels_per_column, None),
                ("mode", r.mode, WIDE_MODES))
    return ()


def document(model: z3.ModelRef, r: Record) -> dict:
    """The `tma check` parameter document of a model of the record."""
    def value(term) -> int:
        return model.eval(term, model_completion=True).as_long()

    def named(term, names):
        return value(term) if names is None else names[value(term)]

    encode, rank = ENCODES[value(r.encode)], value(r.rank)
    doc = {"encode": encode}
    doc.update((key, named(term, names)) for key, term, names in _names_of(r))
    doc.update((key, [value(t) for t in terms]) for key, terms in _lists_of(r, rank, encode))
    doc.update((key, named(term, names)) for key, term, names in _extras_of(r, encode))
    if value(r.has_smem_address):
        doc["smemAddress"] = value(r.smem_address)
    if value(r.direction):
        doc["direction"] = DIRECTIONS[value(r.direction)]
    if value(r.has_coordinates):
        doc["coordinates"] = [value(r.coordinate0)] + [0] * (rank - 1)
    return doc


class MalformedDocument(ValueError):
    """A document that is not an encoder call's C arguments (the CLI's exit 2). It names the key, the value,
    the problem and the rule the key belongs to, as spec.rule.SpecError does (this model does not import
    spec/: tests/cli_tests/test_architecture.py)."""

    def __init__(self, field_name: str, value, problem: str, rule_id: str = "tma.map.params"):
        self.field_name, self.value, self.problem, self.rule_id = field_name, value, problem, rule_id
        big = isinstance(value, int) and value.bit_length() > 128     # no huge int-to-str conversion
        shown = f"<an integer of {value.bit_length()} bits>" if big else repr(value)
        if len(shown) > 60:
            shown = shown[:57] + "..."
        super().__init__(f"{field_name}={shown}: {problem} ({rule_id})")


# The rule a malformed value of each key belongs to (the rule about that argument)
_KEY_RULES = {"rank": "tma.map.rank", "globalAddress": "tma.map.global_address_alignment",
              "globalDim": "tma.map.global_dim_range", "globalStrides": "tma.map.global_stride_range",
              "boxDim": "tma.map.box_range", "elementStrides": "tma.map.element_strides_range",
              "pixelBoxLowerCorner": "tma.map.im2col.corner_range", "pixelBoxUpperCorner": "tma.map.im2col.corner_range",
              "pixelBoxLowerCornerWidth": "tma.map.im2col_wide.corner_range",
              "pixelBoxUpperCornerWidth": "tma.map.im2col_wide.corner_range",
              "channelsPerPixel": "tma.map.im2col.channels_range", "pixelsPerColumn": "tma.map.im2col.pixels_range",
              "smemAddress": "tma.box.destination_alignment", "direction": "tma.map.copy_direction",
              "coordinates": "tma.load.coord0_16B", "swizzle": "tma.map.swizzle_arch"}
# C type of each numeric key: (bits, signed); the list keys' entries alike
_C_TYPES = {"rank": (32, False), "globalAddress": (64, False), "globalDim": (64, False),
            "globalStrides": (64, False), "boxDim": (32, False), "elementStrides": (32, False),
            "pixelBoxLowerCorner": (32, True), "pixelBoxUpperCorner": (32, True),
            "pixelBoxLowerCornerWidth": (32, True), "pixelBoxUpperCornerWidth": (32, True),
            "channelsPerPixel": (32, False), "pixelsPerColumn": (32, False), "smemAddress": (64, False),
            "coordinates": (32, True)}
_ADDRESS_KEYS = ("globalAddress", "smemAddress")       # a JSON integer, or a decimal / 0x-hex string
_LIST_KEYS = {"globalDim": lambda rank: rank, "globalStrides": lambda rank: max(rank - 1, 0),
              "elementStrides": lambda rank: rank, "boxDim": lambda rank: rank,
              "pixelBoxLowerCorner": lambda rank: max(rank - 2, 0), "pixelBoxUpperCorner": lambda rank: max(rank - 2, 0),
              "coordinates": lambda rank: rank}


def _malformed(key: str, value, problem: str) -> MalformedDocument:
    return MalformedDocument(key, value, problem, _KEY_RULES.get(key.split("[")[0], "tma.map.params"))


def _c_value(key: str, value):
    """A JSON integer (an address may be a decimal or 0x-hex string) that fits the key's C type."""
    base = key.split("[")[0]
    if isinstance(value, str) and base in _ADDRESS_KEYS:
        # as users write numbers (docs/CLI.md): an optional sign, decimal or 0x-hex ASCII digits, '_'
        # separators, at most 100 characters
        text = value.strip().lower().replace("_", "")
        signed = text[:1] in ("+", "-")
        sign, body = (-1 if text[:1] == "-" else 1), text[1:] if signed else text
        digits, radix = (body[2:], 16) if body.startswith("0x") else (body, 10)
        allowed = "0123456789abcdef"[:radix]
        if not digits or len(text) > 100 or any(c not in allowed for c in digits):
            raise _malformed(key, value, "not a decimal or 0x-hex number")
        value = sign * int(digits, radix)
    if not isinstance(value, int) or isinstance(value, bool):
        raise _malformed(key, value, "must be an integer")
    bits, signed = _C_TYPES[base]
    low, high = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    if not low <= value <= high:
        raise _malformed(key, value, f"does not fit the C type ({'int' if signed else f'cuuint{bits}_t'})")
    return value


_KEYS = {}


def _keys_of(encode: str) -> set:
    """The keys an `encode` document must hold (those document() writes, less the optional ones)."""
    if encode not in _KEYS:
        _KEYS[encode] = _document_keys(symbolic_record("keys."), encode)
    return _KEYS[encode]


def _document_keys(r: Record, encode: str) -> set:
    return ({"encode", "globalDim", "globalStrides", "elementStrides"} | {k for k, _, _ in _names_of(r)}
            | {k for k, _, _ in _extras_of(r, encode)} | ({"boxDim"} if encode == "tiled" else set())
            | ({"pixelBoxLowerCorner", "pixelBoxUpperCorner"} if encode == "im2col" else set()))


_OPTIONAL_KEYS = ("smemAddress", "direction", "coordinates")


def read_document(doc, arch: str) -> dict:
    """The document as C values: {key: int or name or list}; MalformedDocument when it cannot be written as an
    encoder call's arguments (not a JSON object, a key missing or unknown to its encoder, a value of the
    wrong type or outside its C type, a list whose length is not the rank's, a name outside the
    vocabulary). Swizzle 96B is read (legal on sm103 here; spec/ calls it malformed in an encoder
    document, as cuda.h has no enumerator for it). With a tensorRank the encoder refuses (rule
    tma.map.rank, tma.map.im2col.rank) the lists have no length to hold and are read as given."""
    if not isinstance(doc, dict):
        raise _malformed("params", doc, "a parameter document is a JSON object")
    if arch not in ARCHES:
        raise MalformedDocument("arch", arch, "expected one of " + ", ".join(ARCHES), "tma.map.arch")
    encode = doc.get("encode")
    if encode not in ENCODES:
        raise _malformed("encode", encode, "expected one of " + ", ".join(ENCODES))
    expected = _keys_of(encode)
    for key in doc:
        if key not in expected and key not in _OPTIONAL_KEYS:
            raise _malformed(str(key), doc[key], f"not an argument of the {encode} encoder")
    for key in expected:
        if key not in doc:
            raise _malformed(key, None, f"missing (an argument of the {encode} encoder)")
    rank = _c_value("rank", doc["rank"])
    encodable = (1 if encode == "tiled" else 3) <= rank <= MAX_RANK
    vocabularies = {"dataType": DATA_TYPES, "interleave": INTERLEAVES, "swizzle": SWIZZLES,
                    "l2Promotion": L2_PROMOTIONS, "oobFill": OOB_FILLS, "mode": WIDE_MODES, "direction": DIRECTIONS[1:]}
    values = {"encode": encode}
    for key, value in doc.items():
        if key == "encode":
            continue
        if key in vocabularies:
            if not isinstance(value, str) or value not in vocabularies[key]:
                raise _malformed(key, value, "expected one of " + ", ".join(vocabularies[key]))
            values[key] = value
        elif key in _LIST_KEYS:
            if not isinstance(value, list):
                raise _malformed(key, value, "must be a list of integers")
            length = _LIST_KEYS[key](rank)
            if encodable and len(value) != length:
                raise _malformed(key, value, f"has {len(value)} entries; rank {rank} needs {length}")
            values[key] = [_c_value(f"{key}[{i}]", v) for i, v in enumerate(value)]
        else:
            values[key] = _c_value(key, value)
    return values


def assignment(doc: dict, arch: str, r: Record) -> list:
    """Equalities fixing the record to a document (fields the document lacks are 0); the document is read
    by read_document (MalformedDocument, a ValueError, when it is not an encoder call). With a rank the
    encoder refuses only the rank rules speak (constraints), so lists longer than the record are cut."""
    values = read_document(doc, arch)
    encode = values["encode"]
    fixed = {}                                   # variable name -> (term, value)

    def fix(term, value):
        fixed.setdefault(str(term), (term, value))

    def coded(value, names):
        return value if names is None else names.index(value)

    fix(r.encode, ENCODES.index(encode))
    fix(r.arch, ARCHES.index(arch))
    for key, term, names in _names_of(r) + tuple(_extras_of(r, encode)):
        fix(term, coded(values.get(key, names[0] if names else 0), names))
    slots = {"globalDim": r.global_dim, "globalStrides": r.global_strides, "elementStrides": r.element_strides,
             "boxDim": r.box_dim, "pixelBoxLowerCorner": r.lower_corner, "pixelBoxUpperCorner": r.upper_corner}
    for key, terms in slots.items():
        entries = values.get(key, [])
        for i, term in enumerate(terms):
            fix(term, entries[i] if i < len(entries) else 0)
    fix(r.has_smem_address, int("smemAddress" in values))
    fix(r.smem_address, values.get("smemAddress", 0))
    fix(r.direction, DIRECTIONS.index(values.get("direction", "none")))
    fix(r.has_coordinates, int("coordinates" in values))
    fix(r.coordinate0, (values.get("coordinates") or [0])[0])
    for term in r.variables.values():
        fix(term, 0)
    return [term == value for term, value in fixed.values()]


_EVALUATOR = {}


def _evaluator():
    """The record and its constraints, built once (the rules are the same for every document)."""
    if not _EVALUATOR:
        r = symbolic_record("eval.")
        _EVALUATOR["record"], _EVALUATOR["rules"] = r, constraints(r)
    return _EVALUATOR["record"], _EVALUATOR["rules"]


def evaluate(doc: dict, arch: str) -> dict:
    """rule id -> whether the document obeys it on `arch` (every rule of the model, concretely).
    MalformedDocument (a ValueError) when the document is not an encoder call (read_document)."""
    r, rules = _evaluator()
    facts = assignment(doc, arch, r)
    solver = z3.Solver(ctx=r.rank.ctx)
    solver.add(*facts)
    if solver.check() != z3.sat:         # pragma: no cover  (equalities on distinct Ints are always sat)
        raise ValueError("inconsistent document")
    model = solver.model()
    return {rule_id: z3.is_true(model.eval(c, model_completion=True)) for rule_id, c in rules.items()}


def violated(doc: dict, arch: str) -> list:
    """The rule ids the document breaks on `arch`, in catalogue order. MalformedDocument (a ValueError naming
    the key and its rule) when the document is not an encoder call's arguments."""
    return [rule_id for rule_id, holds in evaluate(doc, arch).items() if not holds]
