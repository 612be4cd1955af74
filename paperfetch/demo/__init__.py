"""The offline demo world: loopback servers that answer like the scholarly services and a set of publishers
(``paperfetch demo``, docs/cli.md). Nothing here reaches beyond the machine.
"""

from __future__ import annotations

from paperfetch.demo.world import DEMO_INPUTS, DemoWorld, fake_pdf

__all__ = ["DEMO_INPUTS", "DemoWorld", "fake_pdf"]
