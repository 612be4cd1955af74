"""Redaction benchmark: ``paperfetch.redact.redact_text`` is linear in its input. Prints figures; asserts nothing.

    python benchmarks/redact.py [--old path/to/old_redact.py]

For inputs of 4 kB, 40 kB and 400 kB of five adversarial shapes (one long word, ``a.a.a…``,
``x%40x%40…``, ``mailto=bbb…``, ``a@a@…``) and of a realistic log text, it prints the time per
call and the ratio to the 4 kB time: linear is about 10x per step, quadratic 100x. With
``--old`` it times another implementation of ``redact_text`` (a file) on the same inputs.
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from typing import Callable

from paperfetch.redact import register_secrets

SHAPES: dict[str, Callable[[int], str]] = {
    "one long word": lambda n: "a" * n,
    "a.a.a...": lambda n: "a." * (n // 2),
    "x%40x%40...": lambda n: "x%40" * (n // 4),
    "mailto=bbb...": lambda n: "mailto=" + "b" * n,
    "a@a@...": lambda n: "a@" * (n // 2),
    "log text": lambda n: ("GET https://api.openalex.org/works?mailto=jane.doe%40uni&api_key=KEY123 -> 200; " * n)[:n],
}


def best_of(fn: Callable[[str], str], text: str, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        fn(text)
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", help="a file defining another redact_text, timed on the same inputs")
    parser.add_argument("--max-size", type=int, default=400_000)
    args = parser.parse_args()
    register_secrets(["jane.doe@uni", "KEY123xyz"])
    implementations: dict[str, Callable[[str], str]] = {}
    from paperfetch.redact import redact_text

    implementations["now"] = redact_text
    if args.old:
        spec = importlib.util.spec_from_file_location("old_redact", args.old)
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        spec.loader.exec_module(module)  # type: ignore[union-attr]
        implementations["old"] = module.redact_text
    sizes = [s for s in (4_000, 40_000, 400_000) if s <= args.max_size]
    print(f"{'implementation':<15}{'shape':<16}" + "".join(f"{s // 1000:>8} kB" for s in sizes) + "   ratio per 10x")
    for name, fn in implementations.items():
        for shape, make in SHAPES.items():
            times = [best_of(fn, make(size), 1 if name == "old" and size > 40_000 else 3) for size in sizes]
            ratios = " ".join(f"{b / max(a, 1e-9):.1f}x" for a, b in zip(times, times[1:]))
            print(f"{name:<15}{shape:<16}" + "".join(f"{t * 1000:>9.2f}ms" for t in times) + f"   {ratios}")


if __name__ == "__main__":
    main()
