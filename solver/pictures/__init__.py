"""Pictures of where things go: a Figure (solver.pictures.figure) of panels of labelled, coloured cells,
built by one module per command (desc, tma, im2col, check, recipe, tmem, scales) from what spec/
computed, and drawn by a backend: SVG text with no dependency (solver.pictures.svg), or PNG through
Pillow with matplotlib's monospace font, both from the optional extra `pip install 'layoutproof[pictures]'`
(solver.pictures.png).

Every cell of every panel drawn is one <rect> and one <text> in the SVG, with data-panel / data-row /
data-column attributes, so tests (and users) can read a picture back: tests/cli_tests/test_pictures.py checks
that each element appears once, at the position spec says. A picture has a budget (solver.pictures.figure:
under 4,000 pixels each way): past it a panel draws its first rows and columns and says so in its title
and the figure's caption; tests/cli_tests/test_picture_budget.py draws each command at its largest size."""
