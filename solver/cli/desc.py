"""`layoutproof desc decode | encode | addresses`: shared-memory matrix descriptors (docs/CLI.md `desc`)."""
from __future__ import annotations

from spec.mma import descriptor as desc_mod
from spec.mma import readmap

from solver.cli.catalogue import summary
from solver.cli import pictures, render
from solver.cli.args import (DESCRIPTOR_HELP, add_arch, add_command, add_group, add_descriptor_swizzle, add_dtype,
                             add_kind, add_major, add_mn, add_picture, add_smem_address, exit_status, number)


def descriptor_document(d: desc_mod.Descriptor) -> dict:
    return {"arch": d.arch, "descriptor": d.hex, "fields": d.fields_json(),
            "violations": [v.as_json() for v in desc_mod.violations(d)]}


def decoded(args) -> desc_mod.Descriptor:
    """The descriptor named by --arch and the HEX argument."""
    return desc_mod.decode(desc_mod.check_arch(args.arch), desc_mod.parse_word(args.descriptor))


def run_decode(args) -> int:
    d = decoded(args)
    document = descriptor_document(d)
    render.emit(args, document, render.descriptor_table(d, document["violations"]))
    return exit_status(document["violations"])


def run_encode(args) -> int:
    d = desc_mod.encode(args.arch, args.start_address, args.lbo, args.sbo, args.swizzle,
                        args.base_offset, args.lbo_mode)
    document = descriptor_document(d)
    render.emit(args, document, render.descriptor_table(d, document["violations"]))
    return exit_status(document["violations"])


def run_addresses(args) -> int:
    d = decoded(args)
    op = readmap.make_operand(d, args.dtype, args.major, args.mn, args.k, args.kind)
    addresses = readmap.read_addresses(op, args.phase_model)
    found = [v.as_json() for v in readmap.violations(op)]
    document = {"arch": d.arch, "descriptor": d.hex, "fields": d.fields_json(), "dtype": op.dtype.name,
                "kind": op.kind, "major": op.major, "mn": op.mn, "k": op.k,
                "phase_model": args.phase_model, "addresses": addresses, "violations": found}
    pictures.save(args, "desc_addresses",
                  f"desc addresses: {d.arch} {op.major}-major {op.dtype.name} MN={op.mn} K={op.k}, descriptor {d.hex}",
                  [f"swizzle {d.swizzle}, start {d.start_address:#x}, LBO {d.leading_byte_offset}, SBO "
                   f"{d.stride_byte_offset}, base offset {d.base_offset}; phase model {args.phase_model}"],
                  addresses, max(1, op.dtype.bits // 8), major=op.major)
    if args.json:
        document["addresses"] = render.int_rows(addresses)
    def text() -> str:         # only without --json
        table = render.address_table(op, addresses, found, full=args.full)
        return table + "\n" + render.chunk_map(op, addresses) if args.map else table
    render.emit(args, document, text)
    return exit_status(found)


def register(commands) -> None:
    desc_commands = add_group(commands, "desc", help=summary("desc"))

    decode = add_command(
        desc_commands, "decode", run_decode,
        examples=['layoutproof desc decode --arch sm90 0x4000004000010040'],
        help="decode a 64-bit descriptor into its fields",
        description="Decode a 64-bit descriptor; list the rules it breaks.")
    add_arch(decode)
    decode.add_argument("descriptor", metavar="HEX", help=DESCRIPTOR_HELP)

    encode = add_command(
        desc_commands, "encode", run_encode,
        examples=['layoutproof desc encode --arch sm90 --smem-address 0x400 --lbo 16 --sbo 1024 --swizzle 128B'],
        help="encode fields into a 64-bit descriptor",
        description="Encode a descriptor. Unrepresentable values exit 2; encodable but illegal "
                    "combinations are encoded anyway and listed as violations (exit 1).")
    add_arch(encode)
    add_smem_address(encode, "the start address field: bytes, a multiple of 16", dest="start_address",
                     aliases=("--start-address",))
    encode.add_argument("--lbo", required=True, type=number,
                        help="leading dimension byte offset (or, in absolute mode, byte address)")
    encode.add_argument("--sbo", required=True, type=number, help="stride dimension byte offset")
    add_descriptor_swizzle(encode)
    encode.add_argument("--base-offset", type=number, default=0, help="0..7 (default 0)")
    encode.add_argument("--lbo-mode", choices=("relative", "absolute"), default=None,
                        help="sm100/sm103 bit 52 (default relative)")

    addresses = add_command(
        desc_commands, "addresses", run_addresses,
        examples=['layoutproof desc addresses --arch sm90 0x4000004000010040 --dtype bf16 --major K --mn 8'],
        help="the shared-memory byte address of every operand element one MMA reads",
        description="addresses[i][j] is the absolute shared-memory byte address of the first byte of "
                    "operand element (mn=i, k=j) read through this descriptor.")
    add_arch(addresses)
    addresses.add_argument("descriptor", metavar="HEX", help=DESCRIPTOR_HELP)
    add_dtype(addresses)
    add_major(addresses)
    add_mn(addresses)
    addresses.add_argument("--k", type=number, default=None,
                           help="K extent in elements (default: the instruction K, 32 bytes of K)")
    add_kind(addresses)
    addresses.add_argument("--phase-model", choices=readmap.PHASE_MODELS, default="hardware",
                           help="how the swizzle phase is found: 'hardware' (default, what an H100 "
                                "does: rule readmap.swizzle_phase) or a refuted reading, for comparison")
    addresses.add_argument("--full", action="store_true",
                           help="table of every element (default: one column per 16-byte chunk)")
    addresses.add_argument("--map", action="store_true",
                           help="also draw shared memory: which operand chunk each 16-byte chunk holds")
    add_picture(addresses)
