"""The `layoutproof` command line.

    main.py    builds the parser from the command modules, runs the command, maps exceptions to exit statuses
    args.py    the exit statuses, the one-line-error parser, argument types (numbers, lists, vocabulary)
    render.py  everything printed: the human-readable text of each command, and emit (JSON or text)
    desc.py    desc decode | encode | addresses
    synth.py   synth, check, recipe
    tma.py     tma check | place | box
    im2col.py  im2col
    prove.py   prove
    rules.py   rules
    fuzz.py    fuzz

Each command module defines register(commands), which adds its parsers with set_defaults(run=...);
a run function builds a JSON-able document and hands it, with its text from render, to render.emit.
"""
