"""`--svg FILE` / `--png FILE` of the commands that show where things go: the figure is built only when
asked for (solver.pictures), and written before the command prints its answer, so a path that cannot
be written, or a PNG without the pictures extra, is exit 2 with nothing printed. Every size a command
accepts is drawn: a figure too large to look at whole draws its first rows and columns and says so in
its caption and panel titles (solver.pictures.figure's budget), in well under 2 s."""
from __future__ import annotations

from spec.rule import SpecError


def wanted(args) -> bool:
    return getattr(args, "svg", None) is not None or getattr(args, "png", None) is not None


def save(args, figure, *arguments, **keywords) -> None:
    """Draw solver.pictures.places.<figure>(*arguments, **keywords) (or figure(...) when it is a function)
    into --svg / --png, when either was given; the picture modules load only then."""
    if not wanted(args):
        return
    from solver.pictures import places, png, svg
    if args.png is not None and not png.available():
        raise SpecError("png", args.png, png.INSTALL)
    drawn = (getattr(places, figure) if isinstance(figure, str) else figure)(*arguments, **keywords)
    if args.svg is not None:
        try:
            with open(args.svg, "w", encoding="utf-8") as handle:
                handle.write(svg.render(drawn))
        except OSError as error:
            raise SpecError("svg", args.svg, f"cannot write: {error.strerror or error}") from None
    if args.png is not None:
        try:
            png.render(drawn, args.png)
        except OSError as error:
            raise SpecError("png", args.png, f"cannot write: {error.strerror or error}") from None
