"""Where the real recorded fixtures are (read-only, never copied into the project): ``$PAPERFETCH_FIXTURES``,
else ``shared/fixtures/real`` beside the checkout."""

from __future__ import annotations

import os
from pathlib import Path

SKIP_REASON = "shared/fixtures/real is not beside this checkout (set PAPERFETCH_FIXTURES to its path)"


def real_fixtures_dir() -> Path | None:
    """The real fixtures' folder, or None where this machine has none."""
    named = os.environ.get("PAPERFETCH_FIXTURES")
    candidate = Path(named) if named else Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "real"
    return candidate if (candidate / "PROVENANCE.md").is_file() else None
