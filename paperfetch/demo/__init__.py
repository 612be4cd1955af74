"""The offline demo world: loopback servers that answer like the scholarly services and a set of publishers.

Start it with ``with DemoWorld() as world:`` and pass ``world.endpoints`` to the Retriever; ``DEMO_INPUTS``
is the demo batch. ``paperfetch demo`` (docs/cli.md) runs it. The servers live in :mod:`.world`, the recorded
literature-search answers in :mod:`.research`, Semantic Scholar and bioRxiv/medRxiv in :mod:`.sources`, the
JATS full texts in :mod:`.fulltext`, and the recorded bodies in ``data/``. Nothing here reaches beyond the machine.
"""

from __future__ import annotations

from paperfetch.demo.world import DEMO_INPUTS, DemoWorld, fake_pdf

__all__ = ["DEMO_INPUTS", "DemoWorld", "fake_pdf"]
