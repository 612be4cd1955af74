"""Only our own bytes in the project: no committed file and nothing in the wheel comes from the recorded fixtures.

The recordings in ``shared/fixtures/real`` were copied out of other people's public repositories for building and
testing against; they are read at test time (tests/_fixtures.py), never committed or shipped. Checked here:
no tracked file and no file of the built wheel is a byte copy of a recording; no committed cassette body and
no demo body carries a recorded body's distinctive content (the DOIs it names, its titles); the demo bodies
are what tests/write_demo_data.py writes; no tracked file names this machine's checkout or fixture folder.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import zipfile
from functools import lru_cache
from pathlib import Path

import pytest
import yaml

from tests._fixtures import REAL_FIXTURES, REPO, require_real_fixtures

DOI = re.compile(rb"10\.\d{4,9}/[^\s\"'<>&\\,;)\]}]+")
#: Titles shorter than this are too common to say a body was copied ("Introduction", "Results").
MIN_TITLE = 30
#: A recorded body's DOIs found together in one of ours: more than chance (a DOI mentioned in a request).
MIN_SHARED_DOIS = 3


def _tracked() -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    return [REPO / name for name in listed.decode().split("\0") if name and (REPO / name).is_file()]


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@lru_cache(maxsize=1)
def _recorded() -> dict[str, Path]:
    """sha256 -> path of every non-empty recording."""
    root = require_real_fixtures()
    return {_digest(p.read_bytes()): p for p in sorted(root.rglob("*")) if p.is_file() and p.stat().st_size > 0}


def _titles_in(data: bytes) -> set[str]:
    text = data.decode("utf-8", "replace")
    found = set(re.findall(r"<(?:ArticleTitle|article-title|title)>([^<]{%d,})<" % MIN_TITLE, text))
    found |= set(re.findall(r'"(?:title|display_name)"\s*:\s*\[?\s*"([^"]{%d,})"' % MIN_TITLE, text))
    normalised = {" ".join(t.lower().split()) for t in found}
    return {t for t in normalised if len(t) >= MIN_TITLE}


def _dois_in(data: bytes) -> set[bytes]:
    return {d.rstrip(b".").lower() for d in DOI.findall(data) if not d.startswith(b"10.5555/")}


@lru_cache(maxsize=1)
def _distinctive() -> tuple[set[str], list[tuple[Path, set[bytes]]]]:
    """Every recorded title (long enough to be distinctive) and each recording's DOI set."""
    titles: set[str] = set()
    doi_sets = []
    for path in _recorded().values():
        if path.suffix in {".json", ".xml", ".yaml", ".yml", ".nxml", ".html"}:
            data = path.read_bytes()
            titles |= _titles_in(data)
            dois = _dois_in(data)
            if dois:
                doi_sets.append((path, dois))
    return titles, doi_sets


def _carries_recorded_content(name: str, body: bytes) -> list[str]:
    titles, doi_sets = _distinctive()
    text = " ".join(body.decode("utf-8", "replace").lower().split())
    problems = [f"{name}: a recorded title: {t[:60]!r}" for t in titles if t in text]
    ours = _dois_in(body)
    for path, dois in doi_sets:
        shared = ours & dois
        if len(shared) >= min(MIN_SHARED_DOIS, len(dois)) and len(shared) >= 2:
            problems.append(f"{name}: {len(shared)} DOIs of {path.name}")
    return problems


def _cassette_bodies(path: Path) -> list[bytes]:
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    return [str(i["response"]["body"]["string"]).encode() for i in doc["interactions"]]


def _demo_bodies() -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((REPO / "paperfetch" / "demo" / "data").iterdir())
            if p.name != "README.md"}


@pytest.mark.recorded  # without the recordings there is nothing to compare with
def test_no_tracked_file_is_a_byte_copy_of_a_recording() -> None:
    recorded = _recorded()
    copies = [f"{p.relative_to(REPO)} = {recorded[_digest(p.read_bytes())]}" for p in _tracked()
              if p.stat().st_size > 0 and _digest(p.read_bytes()) in recorded]
    assert not copies, copies


@pytest.mark.recorded  # without the recordings there is nothing to compare with
def test_no_committed_cassette_or_demo_body_carries_a_recorded_bodys_content() -> None:
    problems = []
    for path in sorted(REPO.glob("cassettes/*/*.yaml")):
        if path.relative_to(REPO / "cassettes").parts[0] in ("built", "live"):
            continue
        for body in _cassette_bodies(path):
            problems += _carries_recorded_content(str(path.relative_to(REPO)), body)
    for name, body in _demo_bodies().items():
        problems += _carries_recorded_content(f"paperfetch/demo/data/{name}", body)
    assert not problems, problems


@pytest.mark.recorded  # without the recordings there is nothing to compare with
def test_the_check_finds_a_recorded_body_in_a_cassette(tmp_path: Path) -> None:
    """The content check is not vacuous: a cassette built from recordings is caught by its titles and DOIs."""
    from tests._fixtures import cassette

    bodies = _cassette_bodies(cassette("crossref/works_five_dois.yaml"))
    assert any(_carries_recorded_content("works_five_dois", body) for body in bodies)
    demo_like = json.dumps({"message": {"title": [sorted(_distinctive()[0])[0]]}}).encode()
    assert _carries_recorded_content("made up", demo_like)


@pytest.mark.recorded
@pytest.mark.slow
def test_the_wheel_ships_no_recorded_bytes(tmp_path: Path) -> None:
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(tmp_path), str(REPO)],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-2000:]
    [wheel] = tmp_path.glob("*.whl")
    recorded = _recorded()
    problems = []
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        for name in names:
            data = archive.read(name)
            if data and _digest(data) in recorded:
                problems.append(f"{name} = {recorded[_digest(data)]}")
            if "/demo/data/" in name and not name.endswith("README.md"):
                problems += _carries_recorded_content(name, data)
    assert not problems, problems
    assert {n.rsplit("/", 1)[-1] for n in names if "/demo/data/" in n} - {"README.md"} == set(_demo_bodies())


def test_the_demo_bodies_are_what_the_writer_writes(tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(REPO / "tests" / "write_demo_data.py"), str(tmp_path)], check=True)
    written = {p.name: p.read_bytes() for p in sorted(tmp_path.iterdir())}
    assert written == _demo_bodies()


def test_no_tracked_file_names_this_machines_checkout_or_fixture_folder() -> None:
    needles = {str(REPO).encode(), str(REPO.resolve()).encode()}
    if REAL_FIXTURES is not None:
        needles |= {str(REAL_FIXTURES).encode(), str(REAL_FIXTURES.resolve()).encode()}
    found = [str(p.relative_to(REPO)) for p in _tracked() if any(n in p.read_bytes() for n in needles)]
    assert not found, found
