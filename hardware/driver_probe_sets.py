"""Sets of encoder calls for the H100 driver probe of issue 14 (hardware/run_driver_probe.py).

Each set is a deterministic function of its name and seed that returns `layoutproof tma check` parameter
documents (docs/CLI.md), globalAddress given as an offset inside a 64 KiB window (the driver adapter
rebases it on a real device allocation: solver/fuzz/adapters/driver_encode.py). Plain Python, no CUDA and
no layoutproof import, so CI regenerates the exact documents a recording answered (the recording keeps
each set's SHA-256 to prove it).

* `heldout`: random encoder calls drawn without looking at layoutproof's rules or its fuzzer: a random
  plausible map (densely strided, a box inside the tensor) with zero to three fields then redrawn from
  wide ranges that include every boundary the CUDA Driver API pages name. Seed 1 was the set the rules
  were fitted to ("tuning"); seed 2 was drawn after the rules were fixed and is the held-out score.
* `box_bytes`: tiled maps around the 228 KiB load limit, with elementStrides[0] from 1 to 8, interleave
  NONE / 16B / 32B (class 1 of the issue: does the driver divide boxDim[0] by elementStrides[0]?).
* `interleaved_im2col`: small im2col maps with interleave 16B / 32B and NONE, random spatial sizes and
  corners (class 2: which dimension the non-empty bounding-box check compares a corner with).
* `spatial_2_31`: im2col and im2col_wide maps with a spatial dimension around 2^31 and 2^32 and random
  corners (class 3: is the bounding-box extent computed in 32 bits?).
* `ranks`: im2col / im2col_wide maps of rank 1, 2 and 6 and tiled ones of rank 0 and 6 (class 4).
"""
from __future__ import annotations

import hashlib
import json
import random

DATA_TYPES = {"UINT8": 1, "UINT16": 2, "UINT32": 4, "INT32": 4, "UINT64": 8, "INT64": 8, "FLOAT16": 2,
              "FLOAT32": 4, "FLOAT64": 8, "BFLOAT16": 2, "FLOAT32_FTZ": 4, "TFLOAT32": 4, "TFLOAT32_FTZ": 4,
              "16U4_ALIGN8B": 1, "16U4_ALIGN16B": 1, "16U6_ALIGN16B": 1}    # bytes per element (packed: ~)
SWIZZLES = ("NONE", "32B", "64B", "128B", "128B_ATOM_32B", "128B_ATOM_32B_FLIP_8B", "128B_ATOM_64B")
INTERLEAVES = ("NONE", "16B", "32B")
L2 = ("NONE", "L2_64B", "L2_128B", "L2_256B")
OOB = ("NONE", "NAN_REQUEST_ZERO_FMA")
KILO = 1024


def digest(documents: list) -> str:
    """SHA-256 of the documents as canonical JSON: a recording names the exact set it answered."""
    return hashlib.sha256(json.dumps(documents, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def _dense_strides(dims: list, element_bytes: int, align: int = 16) -> list:
    strides, size = [], _round_up(max(dims[0], 1) * element_bytes, align)
    for d in dims[1:]:
        strides.append(size)
        size = _round_up(size * max(d, 1), align)
    return strides


def _log_uniform(rng: random.Random, low: int, high: int) -> int:
    """An integer in [low, high], its logarithm uniform (so small sizes are as common as large ones)."""
    low = max(low, 1)
    return min(high, max(low, int(round(2 ** rng.uniform(low.bit_length() - 1, high.bit_length())))))


# --- heldout ------------------------------------------------------------------------------------------
WIDE_VALUES = {   # values a redrawn field takes: wide ranges, every boundary a Driver API page names
    "dim": (0, 1, 2, 3, 8, 15, 16, 17, 127, 128, 129, 255, 256, 1000, 65535, 65536, 2 ** 31 - 1, 2 ** 31,
            2 ** 31 + 1, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 1, 2 ** 40),
    "stride": (0, 4, 8, 12, 16, 24, 32, 48, 64, 80, 96, 128, 4096, 2 ** 20, 2 ** 32, 2 ** 39, 2 ** 40 - 16,
               2 ** 40, 2 ** 40 + 16),
    "box": (0, 1, 2, 3, 4, 5, 8, 12, 16, 17, 24, 32, 48, 64, 96, 100, 128, 200, 255, 256, 257, 512),
    "element_stride": (0, 1, 2, 3, 4, 5, 7, 8, 9, 16),
    "corner": (-2 ** 15 - 1, -2 ** 15, -2 ** 7 - 1, -2 ** 7, -17, -16, -15, -3, -2, -1, 0, 1, 2, 3, 15, 16,
               127, 128, 2 ** 15 - 1, 2 ** 15),
    "channels": (0, 1, 2, 4, 8, 16, 24, 32, 64, 127, 128, 129, 255, 256, 257, 512),
    "pixels": (0, 1, 2, 8, 32, 64, 127, 128, 256, 512, 1023, 1024, 1025, 2048),
    "address": (0, 1, 4, 8, 16, 24, 32, 48, 64, 96, 128, 256, 4096),
    "rank": (0, 1, 2, 3, 4, 5, 6),
}


SPANS = {"NONE": None, "32B": 32, "64B": 64, "128B": 128, "128B_ATOM_32B": 128, "128B_ATOM_32B_FLIP_8B": 128,
         "128B_ATOM_64B": 128}
FLOATS = ("FLOAT16", "FLOAT32", "FLOAT64", "BFLOAT16", "FLOAT32_FTZ", "TFLOAT32", "TFLOAT32_FTZ")


def _plausible(rng: random.Random) -> dict:
    """A random map as a kernel author who knows the usual rules might write it: dense strides, 16-byte
    rows, a box inside the tensor and its swizzle span, non-empty im2col boxes."""
    encode = rng.choices(("tiled", "im2col", "im2col_wide"), (5, 3, 2))[0]
    data_type = rng.choices(tuple(DATA_TYPES), [1 if t.startswith("16U") else 6 for t in DATA_TYPES])[0]
    element_bytes = DATA_TYPES[data_type]
    rank = rng.randint(1, 5) if encode == "tiled" else rng.randint(3, 5)
    interleave = rng.choices(INTERLEAVES, (12, 1, 1))[0] if rank >= 3 else "NONE"
    swizzle = rng.choices(SWIZZLES, (3, 2, 2, 3, 0.3, 0.3, 0.3))[0]
    if interleave == "32B":
        swizzle = "32B"
    span = SPANS[swizzle]
    dims = [_log_uniform(rng, 1, 4096) for _ in range(rank)]
    row_bytes = rng.choice([b for b in (16, 32, 64, 128, 256) if span is None or b <= span])
    first = max(1, row_bytes // element_bytes)
    if data_type.startswith("16U"):
        first = 128
    dims[0] = _round_up(max(dims[0], first), first)
    document = {"encode": encode, "dataType": data_type, "rank": rank,
                "globalAddress": rng.choice((0, 0, 0, 16, 32, 128, 256)),
                "globalDim": dims,
                "globalStrides": _dense_strides(dims, element_bytes, rng.choice((16, 16, 32, 128))),
                "elementStrides": [rng.choice((1, 1, 1, 1, 2, 4)) for _ in range(rank)],
                "interleave": interleave, "swizzle": swizzle, "l2Promotion": rng.choice(L2),
                "oobFill": rng.choices(OOB, (4, 1 if data_type in FLOATS else 0.1))[0]}
    if encode == "tiled":
        document["boxDim"] = [first] + [min(d, _log_uniform(rng, 1, 64)) for d in dims[1:]]
    elif encode == "im2col":
        spatial = rank - 2
        reach = {1: 2 ** 15, 2: 2 ** 7, 3: 2 ** 4}[spatial]
        lower = [rng.randint(-min(reach, 8), min(reach, 8) - 1) for _ in range(spatial)]
        document["pixelBoxLowerCorner"] = lower
        document["pixelBoxUpperCorner"] = [min(reach - 1, max(-reach, lo - rng.randint(0, 3)))
                                           for lo in lower]
        document["channelsPerPixel"] = min(first, 256)
        document["pixelsPerColumn"] = _log_uniform(rng, 1, 256)
    else:
        lower = rng.randint(-8, 7)
        document["pixelBoxLowerCornerWidth"] = lower
        document["pixelBoxUpperCornerWidth"] = max(-32, lower - rng.randint(0, 3))
        document["channelsPerPixel"] = min(first, 256)
        document["pixelsPerColumn"] = _log_uniform(rng, 1, 256)
        document["mode"] = rng.choice(("W", "W128"))
    return document


def _redraw(rng: random.Random, document: dict) -> None:
    """Redraw one field of `document` from its wide value list (an array: one entry)."""
    rank = document["rank"]
    arrays = {"globalDim": "dim", "globalStrides": "stride", "boxDim": "box", "elementStrides": "element_stride",
              "pixelBoxLowerCorner": "corner", "pixelBoxUpperCorner": "corner"}
    scalars = {"channelsPerPixel": "channels", "pixelsPerColumn": "pixels", "globalAddress": "address",
               "pixelBoxLowerCornerWidth": "corner", "pixelBoxUpperCornerWidth": "corner"}
    enums = {"dataType": tuple(DATA_TYPES), "swizzle": SWIZZLES, "interleave": INTERLEAVES,
             "l2Promotion": L2, "oobFill": OOB, "mode": ("W", "W128")}
    field = rng.choice([k for k in document if k in arrays or k in scalars or k in enums] + ["rank"])
    if field == "rank":
        new_rank = rng.choice(WIDE_VALUES["rank"])
        for key, below in (("globalDim", 0), ("globalStrides", 1), ("boxDim", 0), ("elementStrides", 0),
                           ("pixelBoxLowerCorner", 2), ("pixelBoxUpperCorner", 2)):
            if key in document:
                values = document[key][:max(new_rank - below, 0)]
                document[key] = values + [values[-1] if values else 1] * (max(new_rank - below, 0) - len(values))
        document["rank"] = new_rank
    elif field in arrays:
        if document[field]:
            document[field][rng.randrange(len(document[field]))] = rng.choice(WIDE_VALUES[arrays[field]])
    elif field in scalars:
        document[field] = rng.choice(WIDE_VALUES[scalars[field]])
    else:
        document[field] = rng.choice(enums[field])
    del rank


def heldout(seed: int, count: int) -> list:
    rng = random.Random(f"heldout-{seed}")
    documents = []
    for _ in range(count):
        document = _plausible(rng)
        for _ in range(rng.choices((0, 1, 2, 3), (3, 4, 2, 1))[0]):
            _redraw(rng, document)
        documents.append(document)
    return documents


# --- class probes ---------------------------------------------------------------------------------------
def box_bytes(seed: int, count: int) -> list:
    """Tiled maps whose box holds around 228 KiB, counted with or without dividing boxDim[0] by
    elementStrides[0] (and the other dimensions by theirs)."""
    rng = random.Random(f"box_bytes-{seed}")
    documents = []
    while len(documents) < count:
        data_type = rng.choice(("UINT8", "FLOAT16", "FLOAT32", "FLOAT64"))
        element_bytes = DATA_TYPES[data_type]
        interleave = rng.choices(INTERLEAVES, (6, 1, 1))[0]
        rank = rng.randint(3, 5) if interleave != "NONE" else rng.randint(2, 5)
        strides = [rng.randint(1, 8)] + [rng.choice((1, 1, 1, 2, 3)) for _ in range(rank - 1)]
        box = [rng.choice((8, 16, 32, 48, 64, 96, 128, 160, 200, 256)) for _ in range(rank)]
        if interleave == "NONE":
            box[0] = min(box[0], 128 // element_bytes) if rng.random() < 0.5 else box[0]
        else:
            box[0] = (16 if interleave == "16B" else 32) // element_bytes
        loaded = element_bytes
        for b in box:
            loaded *= b
        # scale the last box dimension so the plain product lands within a factor 4 of 228 KiB
        target = rng.uniform(0.25, 4.0) * 228 * KILO
        box[-1] = max(1, min(256, int(round(box[-1] * target / loaded))))
        dims = [max(b, 1) * 2 for b in box]
        documents.append({"encode": "tiled", "dataType": data_type, "rank": rank, "globalAddress": 0,
                          "globalDim": dims, "globalStrides": _dense_strides(dims, element_bytes, 32),
                          "boxDim": box, "elementStrides": strides, "interleave": interleave,
                          "swizzle": "NONE" if interleave == "NONE" else ("32B" if interleave == "32B" else "NONE"),
                          "l2Promotion": "NONE", "oobFill": "NONE"})
    return documents


def interleaved_im2col(seed: int, count: int) -> list:
    rng = random.Random(f"interleaved_im2col-{seed}")
    documents = []
    for _ in range(count):
        interleave = rng.choices(INTERLEAVES, (1, 2, 2))[0]
        data_type = rng.choice(("UINT8", "FLOAT16", "FLOAT32"))
        element_bytes = DATA_TYPES[data_type]
        rank = rng.randint(3, 5)
        spatial = rank - 2
        reach = {1: 8, 2: 4, 3: 3}[spatial]
        channels_in_16 = 16 // element_bytes
        dims = [rng.choice((channels_in_16, 2 * channels_in_16, 8))] + \
            [rng.randint(1, 6) for _ in range(spatial)] + [rng.randint(1, 3)]
        documents.append({"encode": "im2col", "dataType": data_type, "rank": rank, "globalAddress": 0,
                          "globalDim": dims, "globalStrides": _dense_strides(dims, element_bytes, 32),
                          "pixelBoxLowerCorner": [rng.randint(-reach, reach) for _ in range(spatial)],
                          "pixelBoxUpperCorner": [rng.randint(-reach, reach) for _ in range(spatial)],
                          "channelsPerPixel": rng.choice((1, 2, channels_in_16, dims[0])),
                          "pixelsPerColumn": rng.choice((1, 4, 16)),
                          "elementStrides": [1] * rank, "interleave": interleave,
                          "swizzle": "32B" if interleave == "32B" else rng.choice(("NONE", "32B", "64B", "128B")),
                          "l2Promotion": "NONE", "oobFill": "NONE"})
    return documents


SPATIAL_VALUES = (2 ** 31 - 2, 2 ** 31 - 1, 2 ** 31, 2 ** 31 + 1, 2 ** 31 + 2, 2 ** 31 + 15, 2 ** 31 + 16,
                  2 ** 31 + 17, 3 * 2 ** 30, 2 ** 32 - 17, 2 ** 32 - 16, 2 ** 32 - 2, 2 ** 32 - 1, 2 ** 32,
                  2 ** 32 + 1, 2 ** 32 + 16)


def spatial_2_31(seed: int, count: int) -> list:
    rng = random.Random(f"spatial_2_31-{seed}")
    documents = []
    for _ in range(count):
        encode = rng.choice(("im2col", "im2col_wide"))
        rank = rng.randint(3, 5)
        spatial = rank - 2
        dims = [16] + [rng.randint(1, 8) for _ in range(spatial)] + [1]
        dims[1 + rng.randrange(spatial)] = rng.choice(SPATIAL_VALUES)
        strides = [32]
        for d in dims[1:-1]:
            strides.append(min(strides[-1] * d, 2 ** 40 - 32) // 32 * 32 or 32)
        document = {"encode": encode, "dataType": "UINT16", "rank": rank, "globalAddress": 0,
                    "globalDim": dims, "globalStrides": strides[:rank - 1],
                    "channelsPerPixel": 16, "pixelsPerColumn": rng.choice((1, 16, 64)),
                    "elementStrides": [1] * rank, "interleave": "NONE", "swizzle": "NONE",
                    "l2Promotion": "NONE", "oobFill": "NONE"}
        if encode == "im2col":
            reach = {1: 2 ** 15, 2: 2 ** 7, 3: 2 ** 4}[spatial]
            corners = (lambda: rng.choice((0, 0, -1, 1, -reach, reach - 1, rng.randint(-reach, reach - 1))))
            document["pixelBoxLowerCorner"] = [corners() for _ in range(spatial)]
            document["pixelBoxUpperCorner"] = [corners() for _ in range(spatial)]
        else:
            document["pixelBoxLowerCornerWidth"] = rng.choice((0, -1, 1, -32, 31, rng.randint(-32, 31)))
            document["pixelBoxUpperCornerWidth"] = rng.choice((0, -1, 1, -32, 31, rng.randint(-32, 31)))
            document["mode"] = rng.choice(("W", "W128"))
            document["swizzle"] = rng.choice(("64B", "128B"))
        documents.append(document)
    return documents


def ranks(seed: int, count: int) -> list:
    rng = random.Random(f"ranks-{seed}")
    documents = []
    for _ in range(count):
        encode = rng.choice(("tiled", "im2col", "im2col_wide"))
        rank = rng.choice((0, 1, 2, 6) if encode == "tiled" else (1, 2, 6))
        dims = [16] + [4] * max(rank - 1, 0)
        document = {"encode": encode, "dataType": "FLOAT16", "rank": rank, "globalAddress": 0,
                    "globalDim": dims[:rank], "globalStrides": _dense_strides(dims, 2, 32)[:max(rank - 1, 0)],
                    "elementStrides": [1] * rank, "interleave": "NONE", "swizzle": "NONE",
                    "l2Promotion": "NONE", "oobFill": "NONE"}
        if encode == "tiled":
            document["boxDim"] = [min(d, 8) for d in dims[:rank]]
        elif encode == "im2col":
            document["pixelBoxLowerCorner"] = [0] * max(rank - 2, 0)
            document["pixelBoxUpperCorner"] = [0] * max(rank - 2, 0)
            document["channelsPerPixel"], document["pixelsPerColumn"] = 16, 4
        else:
            document["pixelBoxLowerCornerWidth"], document["pixelBoxUpperCornerWidth"] = 0, 0
            document["channelsPerPixel"], document["pixelsPerColumn"] = 16, 4
            document["mode"], document["swizzle"] = "W", "64B"
        documents.append(document)
    return documents


SETS = {"heldout": heldout, "box_bytes": box_bytes, "interleaved_im2col": interleaved_im2col,
        "spatial_2_31": spatial_2_31, "ranks": ranks}


def documents(name: str, seed: int, count: int) -> list:
    return SETS[name](seed, count)
