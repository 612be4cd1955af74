"""Where the real recorded fixtures are, and the cassettes built from them when the tests start.

The recordings (``shared/fixtures/real``, beside the checkout) were copied out of other people's public
repositories for building and testing; they are never committed here nor shipped in the wheel. The folder is
``$PAPERFETCH_FIXTURES`` when set, else ``<checkout>/../shared/fixtures/real``. Without it the tests that need it
skip with one line; under ``CI`` (or ``PAPERFETCH_REQUIRE_FIXTURES``) its absence fails them instead, so a CI run
never silently runs fewer tests.

:func:`build_cassettes` writes every cassette of ``cassettes/build_cassettes.py`` into :data:`CASSETTES` (ignored
by git): the ones paperfetch writes itself always, the ones made of recorded bodies when the fixtures are there.
It rebuilds only when the fixtures, the builder or the sources it asks for URIs change (a stamp of their sizes,
times and contents), under a lock, so parallel test workers build once.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import os
import shutil
import sys
import tempfile
from pathlib import Path
from types import ModuleType

import pytest

__all__ = ["CASSETTES", "REAL_FIXTURES", "REPO", "build_cassettes", "builder", "cassette", "fixtures_or_placeholder",
           "heldout_pdfs", "recorded_params", "replayer", "require_real_fixtures"]

REPO = Path(__file__).resolve().parents[1]
#: Where the session's cassettes are built (ignored by git, see .gitignore).
CASSETTES = REPO / "cassettes" / "built"


def _find_real_fixtures() -> Path | None:
    explicit = os.environ.get("PAPERFETCH_FIXTURES")
    candidate = Path(explicit) if explicit else Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "real"
    return candidate if (candidate / "PROVENANCE.md").is_file() else None


#: The recorded fixtures folder, or None when it is not beside this checkout.
REAL_FIXTURES = _find_real_fixtures()

_MISSING = "needs the recorded fixtures: ../shared/fixtures/real or $PAPERFETCH_FIXTURES (not in the repository)"


def require_real_fixtures() -> Path:
    """The fixtures folder; skips the calling test with one line when it is absent (fails it under CI)."""
    if REAL_FIXTURES is None:
        if os.environ.get("CI") or os.environ.get("PAPERFETCH_REQUIRE_FIXTURES"):
            pytest.fail(_MISSING, pytrace=False)
        pytest.skip(_MISSING)
    return REAL_FIXTURES


def fixtures_or_placeholder() -> Path:
    """The fixtures folder, or a path that does not exist (for module-level paths; the tests reading it are marked
    ``recorded``, or take their cases from :func:`recorded_params`)."""
    return REAL_FIXTURES or REPO / "shared-fixtures-absent"


def recorded_params(cases: list) -> list:
    """*cases* for ``parametrize`` when the fixtures are here; else one case marked ``recorded``, which skips with
    one line (fails under CI), where an empty list would skip silently."""
    return cases if REAL_FIXTURES else [pytest.param(None, id="recorded-fixtures-absent", marks=pytest.mark.recorded)]


def builder() -> ModuleType:
    """``cassettes/build_cassettes.py`` as a module."""
    spec = importlib.util.spec_from_file_location("build_cassettes", REPO / "cassettes" / "build_cassettes.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _stamp(fixtures: Path | None) -> str:
    digest = hashlib.sha256(str(fixtures).encode())
    inputs = [REPO / "cassettes" / "build_cassettes.py", *sorted((REPO / "paperfetch").rglob("*.py"))]
    for path in inputs:
        digest.update(path.read_bytes())
    if fixtures is not None:
        for path in sorted(fixtures.rglob("*")):
            if path.is_file():
                stat = path.stat()
                digest.update(f"{path.relative_to(fixtures)}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def build_cassettes(out: Path = CASSETTES, fixtures: Path | None = REAL_FIXTURES) -> Path:
    """Build the cassettes into *out* unless its stamp says they are current; returns *out*."""
    out.parent.mkdir(parents=True, exist_ok=True)
    stamp = _stamp(fixtures)
    with open(out.parent / f".{out.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        stamp_file = out / ".stamp"
        if stamp_file.is_file() and stamp_file.read_text() == stamp:
            return out
        fresh = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
        try:
            builder().build_offline(fixtures, fresh)
        except BaseException:
            shutil.rmtree(fresh)
            raise
        (fresh / ".stamp").write_text(stamp)
        if out.exists():
            shutil.rmtree(out)
        fresh.rename(out)
    return out


def cassette(name: str, library: Path | None = None) -> Path:
    """The built cassette *name* (``crossref/works_five_dois.yaml``). One made of recorded bodies is only built
    when the fixtures are here: without them the calling test skips with one line (fails under CI)."""
    path = (library or CASSETTES) / name
    if not path.is_file():
        require_real_fixtures()
        raise FileNotFoundError(path)  # the fixtures are here, so the builder has no such cassette
    return path


class _Persister:
    """vcrpy's file persister, but a cassette the build left out (no fixtures) skips the test (see :func:`cassette`)."""

    @classmethod
    def load_cassette(cls, cassette_path, serializer):  # noqa: ANN001, ANN206 - vcrpy's persister protocol
        from vcr.persisters.filesystem import FilesystemPersister

        path = Path(cassette_path)
        cassette(path.name, path.parent)
        return FilesystemPersister.load_cassette(path, serializer)

    @staticmethod
    def save_cassette(cassette_path, cassette_dict, serializer):  # noqa: ANN001, ANN205
        from vcr.persisters.filesystem import FilesystemPersister

        FilesystemPersister.save_cassette(cassette_path, cassette_dict, serializer)


def replayer(library: Path | None = None, **options):  # noqa: ANN003, ANN201 - vcr is a test dependency
    """``paperfetch.testing.cassette_vcr`` replaying from the built cassettes (*library*, default
    ``$PAPERFETCH_CASSETTE_DIR`` or :data:`CASSETTES`); a cassette left out of the build skips the test."""
    from paperfetch.testing import cassette_vcr

    folder = library or Path(os.environ.get("PAPERFETCH_CASSETTE_DIR") or CASSETTES)
    recorder = cassette_vcr(cassette_library_dir=str(folder), **options)
    recorder.register_persister(_Persister)
    return recorder


#: Where :func:`heldout_pdfs` renders (the PDFs and JATS copies there are ignored by git; its README is not).
HELDOUT = REPO / "tests" / "data" / "heldout_pdfs"


def heldout_pdfs(out: Path = HELDOUT) -> Path:
    """The held-out PDFs: the two recorded Europe PMC JATS bodies printed by Chromium in the layouts of
    ``benchmarks/heldout_pdfs.py``, rendered into *out* unless its stamp says they are current (about 40 s).
    Skips with one line without the fixtures or without Chromium (fails under CI / PAPERFETCH_REQUIRE_BROWSER)."""
    fixtures = require_real_fixtures()
    chromium = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").is_file() else None)
    if chromium is None:
        if os.environ.get("CI") or os.environ.get("PAPERFETCH_REQUIRE_BROWSER"):
            pytest.fail("Chromium is not installed: the held-out PDFs cannot be rendered", pytrace=False)
        pytest.skip("Chromium is not installed: the held-out PDFs cannot be rendered")
    spec = importlib.util.spec_from_file_location("heldout_pdfs", REPO / "benchmarks" / "heldout_pdfs.py")
    assert spec is not None and spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    jats = sorted((fixtures / "europepmc").glob("rest__PMC*__fullTextXML.xml"))
    digest = hashlib.sha256((REPO / "benchmarks" / "heldout_pdfs.py").read_bytes())
    for path in jats:
        digest.update(path.read_bytes())
    with open(out / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        stamp = out / ".stamp"
        if not (stamp.is_file() and stamp.read_text() == digest.hexdigest()):
            stamp.unlink(missing_ok=True)
            generator.render_all(jats, out, list(generator.LAYOUTS), chromium)
            stamp.write_text(digest.hexdigest())
    return out
