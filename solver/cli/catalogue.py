"""The commands, in the order `layoutproof --help` lists them: the module that registers each and its
one-line summary. The summaries live here, not in the modules, so that `layoutproof --help` needs no
command module (start-up is most of a small command's time)."""

COMMAND_MODULES = ("desc", "synth", "tma", "tmem", "scales", "im2col", "prove", "rules", "fuzz", "ptx", "audit")

# {command: (module, summary)}, in --help order
COMMANDS = {
    "desc": ("desc", "shared-memory matrix descriptors (wgmma / tcgen05)"),
    "synth": ("synth", "find the descriptor that reads a tile"),
    "check": ("synth", "does this descriptor read that tile?"),
    "recipe": ("synth", "the whole set-up for a tile: smem layout, TMA boxes, one descriptor per MMA"),
    "tma": ("tma", "TMA tensor copies"),
    "tmem": ("tmem", "tcgen05 tensor memory: instruction forms, fragment maps"),
    "scales": ("scales", "block-scaled MMA scale factors: writer layouts and the tensor-memory path"),
    "im2col": ("im2col", "pixels and shared-memory placement of an im2col-family TMA load"),
    "prove": ("prove", "prove or refute the property catalogue with Z3"),
    "rules": ("rules", "the rule catalogue"),
    "fuzz": ("fuzz", "generate configurations that break exactly the rules you choose (or none)"),
    "ptx": ("ptx", "evaluate the descriptors a kernel's PTX feeds wgmma / tcgen05.mma"),
    "audit": ("audit", "does every element each MMA reads come from the TMA load made for it? (PTX + tensor maps)"),
}


def summary(command: str) -> str:
    return COMMANDS[command][1]
