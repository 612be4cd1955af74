"""The shape of the package: no import circles, no oversized modules, no private reads, honest ``__all__``.

These read the source with :mod:`ast` and import nothing but the modules themselves (for ``__all__``), so
they run in well under a second and fail with the names to look at.
"""

from __future__ import annotations

import ast
import importlib
import re
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "paperfetch"
#: Non-blank lines a module may have before it is asking for a room of its own.
MAX_MODULE_LINES = 650


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES: dict[str, Path] = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _owner(name: str) -> str | None:
    """The paperfetch module *name* refers to (a module, or the module defining an attribute)."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def _imports(module: str) -> set[str]:
    """Every paperfetch module *module* imports: at the top, inside functions and under TYPE_CHECKING alike."""
    path = MODULES[module]
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(t for a in node.names if (t := _owner(a.name)))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = module.split(".") if is_package else module.split(".")[:-1]
                base_parts = base_parts[: len(base_parts) - node.level + 1]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for a in node.names:
                target = _owner(f"{base}.{a.name}") or _owner(base)
                if target:
                    found.add(target)
    found.discard(module)
    # a package importing its own submodules is its import face, not a circle of meaning
    return {t for t in found if not (MODULES[module].name == "__init__.py" and t.startswith(module + "."))}


def _circles() -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    graph = {m: _imports(m) for m in MODULES}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for module in graph:
        if module not in index:
            visit(module)
    return components


def test_no_import_circle_among_paperfetch_modules():
    assert _circles() == []


def test_the_circle_finder_sees_a_lazy_import_circle(tmp_path, monkeypatch):
    # the finder itself: a function-level import back to the importer is a circle
    pkg = tmp_path / "paperfetch"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from paperfetch import b\n")
    (pkg / "b.py").write_text("def f():\n    from paperfetch.a import x\n")
    fake = {f"paperfetch.{p.stem}": p for p in pkg.glob("[ab].py")}
    fake["paperfetch"] = pkg / "__init__.py"
    monkeypatch.setattr(sys.modules[__name__], "MODULES", fake)
    assert _circles() == [["paperfetch.a", "paperfetch.b"]]


def test_no_module_is_over_the_size_limit():
    sizes = {m: sum(1 for line in p.read_text(encoding="utf-8").splitlines() if line.strip()) for m, p in MODULES.items()}
    assert {m: n for m, n in sizes.items() if n > MAX_MODULE_LINES} == {}


#: The transport and the stores: the floor the rest of the package stands on.
LOWER_FLOOR = ("paperfetch.http", "paperfetch.state", "paperfetch.ledger", "paperfetch.cache")
#: The bottom-floor utilities the lower floor may use, each importing nothing above the lower floor itself.
BOTTOM_UTILITIES = {
    "paperfetch._version": "the version in the User-Agent",
    "paperfetch.cells": "what counts as an empty cell",
    "paperfetch.clock": "the injected clock",
    "paperfetch.config": "environment readers (state spec, cache dir, lock timeout)",
    "paperfetch.defaults": "the named defaults",
    "paperfetch.errors": "the typed errors",
    "paperfetch.ids": "identifiers and their file names (the ledger rebuild reads file names)",
    "paperfetch.log": "logging setup and the file mode of written files",
    "paperfetch.outcomes": "the status vocabulary the ledger stores",
    "paperfetch.parts": "the locked part file a download writes through",
    "paperfetch.redact": "secrets kept out of logs and errors",
    "paperfetch.validate": "is a file a PDF",
}


def _in_lower_floor(module: str) -> bool:
    return any(module == room or module.startswith(room + ".") for room in LOWER_FLOOR)


def test_the_transport_and_the_stores_import_nothing_above_them():
    upward = {
        (module, target)
        for module in MODULES
        if _in_lower_floor(module)
        for target in _imports(module)
        if not _in_lower_floor(target) and target not in BOTTOM_UTILITIES
    }
    assert upward == set()


def test_the_bottom_utilities_stand_on_the_bottom_floor():
    # what the lower floor may use must not itself reach above the lower floor
    upward = {
        (module, target)
        for module in BOTTOM_UTILITIES
        for target in _imports(module)
        if not _in_lower_floor(target) and target not in BOTTOM_UTILITIES
    }
    assert upward == set()


#: Names with a leading underscore that their libraries document as public.
THIRD_PARTY_PUBLIC = {("_Element", "etree"), ("_Entity", "etree")}


def test_no_module_reads_another_objects_private_attribute():
    offenders = {}
    for module, path in MODULES.items():
        text = path.read_text(encoding="utf-8")
        if "SLF001" in text:
            offenders[module] = "noqa: SLF001"
        for node in ast.walk(ast.parse(text)):
            if not (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")):
                continue
            base = node.value
            if isinstance(base, ast.Name) and base.id in ("self", "cls"):
                continue
            if isinstance(base, ast.Call) and isinstance(base.func, ast.Name) and base.func.id == "super":
                continue
            if isinstance(base, ast.Name) and base.id in ("sys", "os"):  # sys._getframe-style stdlib APIs
                continue
            if node.attr.endswith("_") or (node.attr, getattr(base, "id", None)) in THIRD_PARTY_PUBLIC:
                continue  # IPython's display protocol (_repr_mimebundle_); lxml's element type (etree._Element)
            offenders.setdefault(module, f"line {node.lineno}: .{node.attr}")
    assert offenders == {}


def _public_definitions(path: Path) -> set[str]:
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
            names.add(node.name)
    return names


@pytest.mark.parametrize("module", sorted(m for m in MODULES if not m.endswith(("__main__", "_version"))))
def test_all_is_sorted_complete_and_resolvable(module):
    mod = importlib.import_module(module)
    exported = list(getattr(mod, "__all__", ()))
    assert exported, f"{module} has no __all__"
    assert exported == sorted(exported), f"{module}.__all__ is not sorted"
    assert len(set(exported)) == len(exported), f"{module}.__all__ lists a name twice"
    missing = [name for name in exported if not hasattr(mod, name)]
    assert missing == [], f"{module}.__all__ names what it does not have"
    unlisted = sorted(_public_definitions(MODULES[module]) - set(exported))
    assert unlisted == [], f"{module} defines public names its __all__ leaves out"


def _layout_block() -> str:
    text = (PACKAGE.parent / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Layout", 1)[1].split("\n## ", 1)[0]
    return section.split("```", 2)[1]


def _named_in_layout(block: str) -> tuple[set[str], set[str]]:
    """The modules (paths under paperfetch/) and folders the README's Layout block names. A line indented two
    spaces that starts with ``folder/`` opens that folder: the ``.py`` names on it and on the deeper lines under it
    are its modules; any other two-space line names modules of the package itself."""
    modules: set[str] = set()
    folders: set[str] = set()
    folder = ""
    for line in block.splitlines()[1:]:
        if line.startswith("  ") and not line.startswith("   "):
            head = line.split()[0]
            folder = head if head.endswith("/") else ""
            if folder:
                folders.add(folder.rstrip("/"))
        modules.update(folder + name for name in re.findall(r"\b[a-z_]+\.py\b", line))
    return modules, folders


def test_the_readme_layout_names_every_module_and_nothing_else():
    modules, folders = _named_in_layout(_layout_block())
    tree = {str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")}
    packages = {str(p.parent.relative_to(PACKAGE)) for p in PACKAGE.rglob("__init__.py") if p.parent != PACKAGE}
    unnamed = sorted(m for m in tree - modules if not (m.endswith("/__init__.py") and m.rsplit("/", 1)[0] in folders))
    assert unnamed == [], "modules README.md's Layout block leaves out"
    assert sorted(modules - tree) == [], "modules README.md's Layout block names that do not exist"
    assert sorted(packages - folders) == [] and sorted(folders - packages) == []
def test_docs_testing_md_maps_every_test_file_and_only_those():
    """docs/testing.md's map names each tests/test_*.py; a file it names exists."""
    tests = Path(__file__).resolve().parent
    text = (tests.parent / "docs" / "testing.md").read_text(encoding="utf-8")
    named = set(re.findall(r"\b(test_\w+\.py)\b", text))
    present = {path.name for path in tests.glob("test_*.py")}
    assert sorted(present - named) == [], "test files docs/testing.md does not name"
    assert sorted(named - present) == [], "files docs/testing.md names that do not exist"
