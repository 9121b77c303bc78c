"""Progress of long work on a terminal: one line on stderr, rewritten in place at most five times a
second ("fuzz: 1200/100000 cases, 950/s"), and cleared at the end. Silent when stderr is not a terminal
(piped, redirected, CI), so output files and logs never carry it."""
from __future__ import annotations

import sys
import time


class Progress:
    def __init__(self, label: str, total: int, unit: str, stream=None, enabled=None, every: float = 0.2):
        self.label, self.total, self.unit = label, total, unit
        self.stream = stream if stream is not None else sys.stderr
        if enabled is None:
            isatty = getattr(self.stream, "isatty", None)
            enabled = bool(isatty and isatty())
        self.enabled, self.every = enabled, every
        self.began = self.last = time.monotonic()
        self.shown = False

    def update(self, done: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.last < self.every and done < self.total:
            return
        self.last = now
        rate = done / (now - self.began) if now > self.began else 0.0
        self.stream.write(f"\r{self.label}: {done}/{self.total} {self.unit}, {rate:,.0f}/s ")
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
