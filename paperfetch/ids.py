"""Recognise, normalise and name paper identifiers: DOIs, PMIDs, PMCIDs and arXiv IDs, by syntax only
(no network, no conversion between types). Canonical forms and file names: docs/outcomes.md, "Schema".
"""

from __future__ import annotations

import hashlib
import math
import numbers
import re
import string
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from urllib.parse import unquote

from paperfetch.cells import is_missing
from paperfetch.errors import ConfigurationError, InvalidIdentifier

__all__ = [
    "FILENAME_FIELDS",
    "IdType",
    "Identifier",
    "ParsedInput",
    "filename_for",
    "parse_identifier",
    "parse_many",
    "safe_parse",
]


class IdType(str, Enum):
    DOI = "doi"
    PMID = "pmid"
    PMCID = "pmcid"
    ARXIV = "arxiv"

    def __str__(self) -> str:
        return self.value


#: Registrant of the DataCite DOIs that arXiv assigns (``10.48550/arXiv.<id>``).
ARXIV_DOI_PREFIX = "10.48550/arxiv."


@dataclass(frozen=True)
class Identifier:
    """One identifier in canonical form; build it with :func:`parse_identifier`."""

    type: IdType
    value: str
    version: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.type, IdType):
            object.__setattr__(self, "type", IdType(self.type))

    @property
    def key(self) -> str:
        """Canonical string such as ``doi:10.1038/nature12373`` or ``arxiv:1706.03762`` (no version)."""
        return f"{self.type.value}:{self.value}"

    @classmethod
    def from_key(cls, key: str) -> "Identifier":
        """The identifier a key names, *without validation*, for replaying recorded requests (inputs: parse_identifier)."""
        id_type, value = key.split(":", 1)
        version = None
        if id_type == IdType.ARXIV.value and (match := re.fullmatch(r"(.+?)(v\d+)", value)):
            value, version = match.groups()
        return cls(IdType(id_type), value, version)

    @property
    def doi(self) -> str | None:
        """The DOI: the value for a DOI, the DataCite DOI for arXiv, else ``None``."""
        if self.type is IdType.DOI:
            return self.value
        if self.type is IdType.ARXIV:
            return ARXIV_DOI_PREFIX + self.value
        return None

    def column(self) -> tuple[str, str]:
        """The outcome column this identifier fills and its text there: ``("pmid", "123")``; an arXiv
        identifier fills ``arxiv_id``, with its version."""
        if self.type is IdType.ARXIV:
            return "arxiv_id", self.value + (self.version or "")
        return self.type.value, self.value

    def __str__(self) -> str:
        return self.key


@dataclass(frozen=True)
class ParsedInput:
    """The outcome of parsing one item of :func:`parse_many`."""

    position: int
    input: object
    identifier: Identifier | None
    error: str | None
    duplicate_of: int | None

    @property
    def ok(self) -> bool:
        """True when the item parsed (duplicates included)."""
        return self.identifier is not None


_EXPECT = {
    IdType.DOI: "a DOI is '10.<registrant>/<suffix>', e.g. '10.1038/nature12373'",
    IdType.PMID: "a PMID is a positive number of 1 to 9 digits, e.g. '31452104'",
    IdType.PMCID: "a PMCID is 'PMC' followed by digits, e.g. 'PMC3531190'",
    IdType.ARXIV: (
        "an arXiv ID is 'YYMM.NNNNN' (e.g. '1706.03762') or 'archive/YYMMNNN' "
        "(e.g. 'hep-th/9901001'), optionally followed by a version such as 'v2'"
    ),
}
_NAME = {kind: expected.split(" is ", 1)[0] for kind, expected in _EXPECT.items()}  # "a DOI", "an arXiv ID"
_EXPECT_ANY = (
    "expected a DOI, PMID, PMCID or arXiv ID, e.g. '10.1038/nature12373', "
    "'PMID:31452104', 'PMC3531190' or 'arXiv:1706.03762'"
)


def _show(value: object) -> str:
    """A short, printable, encodable picture of *value*, even when its ``__repr__`` raises or lies."""
    try:
        text = repr(value[:80] if isinstance(value, (str, bytes, bytearray)) else value)
        if not isinstance(text, str):
            raise TypeError("__repr__ returned a non-string")
    except Exception:  # noqa: BLE001 - a broken __repr__ is the value's problem, not the batch's
        text = f"<{_type_name(value)} object>"
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")  # lone surrogates from a custom __repr__
    return text if len(text) <= 80 else text[:77] + "..."


def _type_name(value: object) -> str:
    try:
        name = type(value).__name__
        return name if isinstance(name, str) and name.isidentifier() else "unknown"
    except Exception:  # noqa: BLE001
        return "unknown"


def _fail(value: object, idtype: IdType, detail: str | None = None) -> InvalidIdentifier:
    reason = f"{detail}; " if detail else ""
    return InvalidIdentifier(f"{_show(value)} is not {_NAME[idtype]}: {reason}{_EXPECT[idtype]}", value=value)


def _fail_any(value: object, detail: str) -> InvalidIdentifier:
    return InvalidIdentifier(f"{_show(value)} is not an identifier: {detail}; {_EXPECT_ANY}", value=value)


# Invisible characters that copy-paste (web pages, PDFs) leaves inside identifiers.
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad\u180e"))
_WRAPPERS = {"(": ")", "[": "]", "{": "}", "<": ">", '"': '"', "'": "'", "\u201c": "\u201d", "\u2018": "\u2019"}
_TRAILING_PUNCT = ".,;:"

_DOI_URL_RE = re.compile(r"^(?:https?://)?(?:dx\.|www\.)?doi\.org/+", re.I)
_ARXIV_URL_RE = re.compile(r"^(?:https?://)?(?:www\.|export\.)?arxiv\.org/+(?:abs|pdf|html)/+(.*)$", re.I | re.S)
_PUBMED_URL_RE = re.compile(
    r"^(?:https?://)?(?:pubmed\.ncbi\.nlm\.nih\.gov|(?:www\.)?ncbi\.nlm\.nih\.gov/pubmed)/+([^/?#]*)/*(?:[?#].*)?$",
    re.I | re.S,
)
_PMC_URL_RE = re.compile(
    r"^(?:https?://)?(?:(?:www\.)?ncbi\.nlm\.nih\.gov/pmc|pmc\.ncbi\.nlm\.nih\.gov)/+articles/+([^/?#]*)/*(?:[?#].*)?$",
    re.I | re.S,
)
_ANY_URL_RE = re.compile(r"^[a-z][a-z0-9+.-]*://", re.I)
_LABEL_RE = re.compile(r"^(doi|pmcid|pmid|arxiv)(?:\s*[:\-]\s*|\s+|(?=[0-9])|$)(.*)$", re.I | re.S)

_DOI_RE = re.compile(r"^10\.([0-9]{4,9}(?:\.[0-9]+)*)/(.+)$", re.S)
_DIGITS_RE = re.compile(r"^[0-9]+$")
_PMCID_RE = re.compile(r"^(?:pmc\s*[:\-]?\s*)?([0-9]+)$", re.I)
_ARXIV_NEW_RE = re.compile(r"^([0-9]{2})([0-9]{2})\.([0-9]{4,5})(?:v([0-9]+))?$", re.I)
_ARXIV_OLD_RE = re.compile(
    r"^([a-z]+(?:-[a-z]+)?)(?:\.[a-z]+(?:-[a-z]+)?)?/([0-9]{2})([0-9]{2})([0-9]{3})(?:v([0-9]+))?$", re.I
)
_ARXIV_LIKE_NEW_RE = re.compile(r"^[0-9]{4}\.[0-9]+(?:v[0-9]*)?$", re.I)
_ARXIV_LIKE_OLD_RE = re.compile(r"^[a-z]+(?:-[a-z]+)?(?:\.[a-z-]+)?/[0-9]+(?:v[0-9]*)?$", re.I)

#: Archives of old-style arXiv identifiers (the scheme ended in March 2007).
_ARXIV_ARCHIVES = frozenset(
    """acc-phys adap-org alg-geom ao-sci astro-ph atom-ph bayes-an chao-dyn chem-ph cmp-lg comp-gas
    cond-mat cs dg-ga funct-an gr-qc hep-ex hep-lat hep-ph hep-th math math-ph mtrl-th nlin nucl-ex
    nucl-th patt-sol physics plasm-ph q-alg q-bio quant-ph solv-int supr-con""".split()
)

_MAX_NUMBER = 999_999_999



def _coerce_hint(hint: IdType | str | None) -> IdType | None:
    if hint is None or isinstance(hint, IdType):
        return hint
    if isinstance(hint, str):
        try:
            return IdType(hint.strip().lower())
        except ValueError:
            pass
    valid = ", ".join(repr(t.value) for t in IdType)
    raise ConfigurationError(f"unknown identifier type {hint!r} for hint: expected one of {valid} or None")


#: Longest text read as an identifier; the longest registered DOIs are a few hundred characters.
MAX_INPUT_CHARS = 2048


def _is_bool(value: object) -> bool:
    return isinstance(value, bool) or (type(value).__module__ == "numpy" and type(value).__name__ in ("bool_", "bool"))


def _clean(text: str) -> str:
    text = text.translate(_INVISIBLE).strip()
    while len(text) >= 2 and _WRAPPERS.get(text[0]) == text[-1]:
        text = text[1:-1].translate(_INVISIBLE).strip()
    return text


def _strip_trailing(text: str) -> str:
    """Drop copy-paste punctuation and unbalanced closing brackets/quotes from the end."""
    while text:
        last = text[-1]
        opener = {")": "(", "]": "[", "}": "{", ">": "<"}.get(last)
        if not (last in _TRAILING_PUNCT or last.isspace() or (opener and text.count(opener) < text.count(last))
                or (last in "\"'\u201d\u2019" and last not in text[:-1])):
            break
        text = text[:-1]
    return text



def _parse_doi(rest: str, original: object) -> Identifier:
    text = _DOI_URL_RE.sub("", rest.strip(), count=1)
    if not text:
        raise _fail(original, IdType.DOI, "nothing follows the prefix")
    text = _strip_trailing(unquote(text).strip())  # a copied URL's %2F; text without escapes stays as it is
    match = _DOI_RE.match(text)
    if match is None:
        if text.startswith("10.") and "/" not in text:
            raise _fail(original, IdType.DOI, "the '/<suffix>' part is missing")
        raise _fail(original, IdType.DOI)
    suffix = match.group(2)
    if any(ch.isspace() for ch in suffix):
        raise _fail(original, IdType.DOI, "it contains whitespace")
    if any(unicodedata.category(ch) == "Cc" for ch in suffix):
        raise _fail(original, IdType.DOI, "it contains a control character")
    doi = text.lower()
    if doi.startswith(ARXIV_DOI_PREFIX):
        try:
            return _parse_arxiv(doi[len(ARXIV_DOI_PREFIX):], original)
        except InvalidIdentifier:
            pass  # a 10.48550 DOI that is not an arXiv ID is still a well-formed DOI
    return Identifier(IdType.DOI, doi)


def _number(digits: str, original: object, idtype: IdType) -> int:
    number = int(digits)
    if number == 0:
        raise _fail(original, idtype, "it is zero")
    if number > _MAX_NUMBER:
        raise _fail(original, idtype, "it has too many digits")
    return number


def _parse_pmid(rest: str, original: object) -> Identifier:
    text = rest.strip()
    if text.startswith("-") and _DIGITS_RE.match(text[1:]):
        raise _fail(original, IdType.PMID, "it is negative")
    if not _DIGITS_RE.match(text):
        raise _fail(original, IdType.PMID)
    return Identifier(IdType.PMID, str(_number(text, original, IdType.PMID)))


def _parse_pmcid(rest: str, original: object) -> Identifier:
    text = rest.strip()
    match = _PMCID_RE.match(text)
    if match is None:
        raise _fail(original, IdType.PMCID)
    return Identifier(IdType.PMCID, f"PMC{_number(match.group(1), original, IdType.PMCID)}")


def _version(raw: str | None, original: object) -> str | None:
    if raw is None:
        return None
    number = int(raw)
    if number == 0:
        raise _fail(original, IdType.ARXIV, "versions start at v1")
    return f"v{number}"


def _parse_arxiv(rest: str, original: object) -> Identifier:
    text = rest.strip()
    if text.lower().startswith(ARXIV_DOI_PREFIX):
        text = text[len(ARXIV_DOI_PREFIX):]
    match = _ARXIV_NEW_RE.match(text)
    if match is not None:
        yy, mm, number, version = match.groups()
        if not 1 <= int(mm) <= 12:
            raise _fail(original, IdType.ARXIV, f"'{yy}{mm}' is not a year and month (YYMM)")
        return Identifier(IdType.ARXIV, f"{yy}{mm}.{number}", _version(version, original))
    match = _ARXIV_OLD_RE.match(text)
    if match is not None:
        archive, yy, mm, number, version = match.groups()
        archive = archive.lower()
        if archive not in _ARXIV_ARCHIVES:
            raise _fail(original, IdType.ARXIV, f"'{archive}' is not an arXiv archive")
        if not (1 <= int(mm) <= 12 and (int(yy) >= 91 or int(yy) <= 7)):
            raise _fail(original, IdType.ARXIV, f"'{yy}{mm}' is not a year and month of the old scheme (1991-2007)")
        return Identifier(IdType.ARXIV, f"{archive}/{yy}{mm}{number}", _version(version, original))
    raise _fail(original, IdType.ARXIV)


_PARSERS = {
    IdType.DOI: _parse_doi,
    IdType.PMID: _parse_pmid,
    IdType.PMCID: _parse_pmcid,
    IdType.ARXIV: _parse_arxiv,
}


def _detect(text: str) -> IdType | None:
    lowered = text.lower()
    if lowered.startswith("10."):
        return IdType.DOI
    if lowered.startswith("pmc"):
        return IdType.PMCID
    if _DIGITS_RE.match(text.lstrip("+-")):
        return IdType.PMID
    if _ARXIV_LIKE_NEW_RE.match(text) or _ARXIV_LIKE_OLD_RE.match(text):
        return IdType.ARXIV
    return None


def _split(text: str) -> tuple[IdType | None, str, str | None]:
    """Return (type announced by a URL or label, the rest, the label seen)."""
    if _DOI_URL_RE.match(text):
        return IdType.DOI, _DOI_URL_RE.sub("", text, count=1), "doi.org URL"
    match = _ARXIV_URL_RE.match(text)
    if match is not None:
        rest = re.sub(r"[?#].*$", "", match.group(1), flags=re.S).rstrip("/")
        if rest.lower().endswith(".pdf"):
            rest = rest[:-4]
        return IdType.ARXIV, _strip_trailing(rest), "arXiv URL"
    for pattern, kind, how in ((_PUBMED_URL_RE, IdType.PMID, "PubMed URL"), (_PMC_URL_RE, IdType.PMCID, "PMC URL")):
        if (match := pattern.match(text)) is not None:
            return kind, match.group(1), how
    match = _LABEL_RE.match(text)
    if match is not None:
        label = match.group(1)
        return IdType(label.lower()), _strip_trailing(match.group(2).strip()), f"'{label}' label"
    if text.lower().startswith("10."):
        # a DOI's own parser strips copy-paste punctuation: stripped here, a truncated "10." would read as PMID 10
        return None, text, None
    return None, _strip_trailing(text), None


def _parse_text(text: str, original: object, hint: IdType | None) -> Identifier:
    if len(text) > MAX_INPUT_CHARS:
        raise _fail_any(original, f"it is {len(text):,} characters long; an identifier is at most {MAX_INPUT_CHARS:,}")
    _refuse_surrogates(text, original)
    cleaned = _clean(text)
    if not cleaned:
        raise InvalidIdentifier(f"{_show(original)} is blank input: {_EXPECT_ANY}", value=original)
    announced, rest, how = _split(cleaned)
    if announced is None and _ANY_URL_RE.match(cleaned):
        target = _NAME[hint] if hint else "an identifier"
        raise InvalidIdentifier(
            f"{_show(original)} is not {target}: it is a URL, but not a doi.org, arxiv.org, PubMed or PMC "
            f"address; paste the identifier itself; {_EXPECT[hint] if hint else _EXPECT_ANY}",
            value=original,
        )
    # a DOI of arXiv is acceptable where arXiv IDs are expected
    if hint is not None and announced not in (None, hint) and (announced, hint) != (IdType.DOI, IdType.ARXIV):
        raise _fail(original, hint, f"it carries a {how} for {_NAME[announced]}")
    kind = announced
    if kind is None:
        detected = _detect(rest)
        if hint is not None:
            kind = IdType.DOI if detected is IdType.DOI and hint in (IdType.DOI, IdType.ARXIV) else hint
        elif detected is None:
            raise _fail_any(original, "it does not look like any known identifier")
        else:
            kind = detected
    if not rest.strip():
        raise _fail(original, kind, "nothing follows the prefix")
    result = _PARSERS[kind](rest, original)
    if hint is IdType.ARXIV and result.type is not IdType.ARXIV:
        raise _fail(original, IdType.ARXIV, "it is a DOI, but not an arXiv DOI (10.48550/arXiv.<id>)")
    return result


def _refuse_surrogates(text: str, original: object) -> None:
    """Text that cannot be encoded (a lone surrogate) is refused: a key reaches the ledger, URLs and file names."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _fail_any(original, f"it holds U+{ord(text[exc.start]):04X} at position {exc.start}, a lone surrogate "
                                  "that cannot be encoded as text (a damaged cell: re-read the file with the right "
                                  "encoding)") from None


def _parse_number(number: int, original: object, hint: IdType | None) -> Identifier:
    if hint in (IdType.DOI, IdType.ARXIV):
        raise _fail(original, hint, "a number on its own cannot be one")
    idtype = hint or IdType.PMID
    if number < 0:
        raise _fail(original, idtype, "it is negative")
    return _PARSERS[idtype](str(number), original)



def parse_identifier(text: object, *, hint: IdType | str | None = None) -> Identifier:
    """Parse one DOI, PMID, PMCID or arXiv ID (a string, bare, labelled or a URL; an integer or integral float
    PMID; an :class:`Identifier`) into its canonical :class:`Identifier`. *hint* forces the type
    (``"pmcid"`` reads bare digits as ``PMC<digits>``; ``"arxiv"`` or ``"doi"`` take an arXiv DOI as arXiv).
    Raises InvalidIdentifier (a ValueError) naming the value and the expected form; ConfigurationError for an unknown *hint*."""
    kind = _coerce_hint(hint)
    try:
        return _parse_any(text, kind)
    except InvalidIdentifier:
        raise
    except Exception as exc:  # noqa: BLE001 - any object yields an answer: Decimal('sNaN'), a raising __str__ …
        raise _fail_any(text, f"it could not be read as text ({_type_name(exc)})") from None


def _parse_any(text: object, kind: IdType | None) -> Identifier:
    if isinstance(text, Identifier):
        if kind is not None and text.type is not kind:
            raise _fail(text, kind, f"it is {_NAME[text.type]}")
        _refuse_surrogates(text.value + (text.version or ""), text)  # built without parsing: its text as it is
        return text
    if is_missing(text):
        raise InvalidIdentifier(f"{_show(text)} is blank input (a missing value): {_EXPECT_ANY}", value=text)
    if _is_bool(text):
        raise _fail_any(text, "it is a boolean")
    if isinstance(text, str):
        return _parse_text(str(text), text, kind)
    if isinstance(text, (bytes, bytearray)):
        try:
            decoded = bytes(text).decode("utf-8")
        except UnicodeDecodeError:
            raise _fail_any(text, "its bytes are not UTF-8 text") from None
        return _parse_text(decoded, text, kind)
    if isinstance(text, numbers.Integral):
        return _parse_number(int(text), text, kind)
    if isinstance(text, numbers.Real):
        number = float(text)
        if math.isinf(number) or not number.is_integer():
            detail = "it is a number with a fractional part"
            if kind in (None, IdType.ARXIV):
                detail += " (an arXiv ID read as a number loses trailing zeros: read the column as text, dtype=str)"
            raise (_fail(text, kind, detail) if kind else _fail_any(text, detail))
        return _parse_number(int(number), text, kind)
    raise _fail_any(text, f"expected a string or an integer, got {type(text).__name__}")


def parse_many(values: Iterable[object] | object, *, hint: IdType | str | None = None) -> list[ParsedInput]:
    """Parse every item of *values* (a list, generator, array or Series; a lone string or number is one item)
    in order: invalid and blank items get ``identifier=None`` and an ``error``; ``duplicate_of`` is the
    position of the first item with the same :attr:`Identifier.key`."""
    kind = _coerce_hint(hint)
    if hasattr(values, "columns") and hasattr(values, "iloc"):
        named = next((str(c) for c in values.columns if str(c).lower() in ("doi", "pmid", "pmcid")), "doi")
        raise TypeError(f"parse_many takes one column, not a DataFrame: pass e.g. df[{named!r}]")
    items: Iterable[object]
    if isinstance(values, (str, bytes, bytearray, numbers.Number)) or not isinstance(values, Iterable):
        items = [values]  # one item (None, an Identifier, a number)
    elif hasattr(values, "tolist") and hasattr(values, "__len__"):
        items = values.tolist()  # pandas Series / numpy array: values in order, numpy scalars unboxed
    else:
        items = values
    results: list[ParsedInput] = []
    first: dict[str, int] = {}
    for position, item in enumerate(items):
        try:
            identifier = parse_identifier(item, hint=kind)
        except InvalidIdentifier as exc:  # parse_identifier turns any other error into one
            results.append(ParsedInput(position, item, None, str(exc), None))
            continue
        duplicate_of = first.setdefault(identifier.key, position)
        results.append(
            ParsedInput(position, item, identifier, None, None if duplicate_of == position else duplicate_of)
        )
    return results


#: Fields a :func:`filename_for` template may use.
FILENAME_FIELDS = ("type", "value", "key", "version")

#: Characters kept as they are in file names; everything else becomes ``_``.
_SAFE_CHARS = frozenset(string.ascii_letters + string.digits + "-._+()[],;=@")
_WINDOWS_RESERVED = frozenset(
    ["CON", "PRN", "AUX", "NUL"] + [f"COM{i}" for i in range(10)] + [f"LPT{i}" for i in range(10)]
)
_EXTENSION_RE = re.compile(r"^(?:\.[A-Za-z0-9_-]+)*$")
_HASH_LENGTH = 8
_MIN_STEM = 8


def _check_template(template: str) -> None:
    valid = ", ".join("{" + name + "}" for name in FILENAME_FIELDS)
    if not isinstance(template, str):
        raise ConfigurationError(f"file name template must be a string using {valid}, got {template!r}")
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise ConfigurationError(f"malformed file name template {template!r} ({exc}); valid fields: {valid}") from None
    for _, field, _, _ in parsed:
        if field is not None and field not in FILENAME_FIELDS:
            raise ConfigurationError(f"unknown field {{{field}}} in file name template {template!r}; valid fields: {valid}")


def filename_for(
    identifier: Identifier,
    template: str = "{type}_{value}",
    *,
    extension: str = ".pdf",
    max_length: int = 150,
) -> str:
    """A stable, portable file name (one path component) for *identifier* (docs/outcomes.md, "Schema"): the
    template's ``{type}``, ``{value}``, ``{key}``, ``{version}`` as plain ASCII, with ``_`` and 8 hex digits of
    the key's SHA-256 before the extension whenever the rendering had to be changed or cut to *max_length*.
    Raises ConfigurationError for an unknown field, a malformed extension, or a *max_length* too small."""
    if not isinstance(identifier, Identifier):
        raise TypeError(f"filename_for needs an Identifier (see parse_identifier), got {type(identifier).__name__}")
    _check_template(template)
    if extension and not extension.startswith("."):
        extension = "." + extension
    if not _EXTENSION_RE.match(extension) or len(extension) > 20:
        raise ConfigurationError(f"extension {extension!r} must be empty or like '.pdf' (dot, letters and digits)")
    minimum = len(extension) + 1 + _HASH_LENGTH + _MIN_STEM
    if max_length < minimum:
        raise ConfigurationError(f"max_length={max_length} is too small: with extension {extension!r} it must be >= {minimum}")
    try:
        rendered = template.format(
            type=identifier.type.value,
            value=identifier.value,
            key=identifier.key,
            version=identifier.version or "",
        )
    except (ValueError, TypeError, IndexError, KeyError) as exc:
        raise ConfigurationError(f"cannot fill file name template {template!r}: {exc}") from None

    stem = "".join(ch if ch in _SAFE_CHARS else "_" for ch in rendered)
    stem = re.sub(r"^[.\-]+", lambda m: "_" * len(m.group()), stem)
    stem = stem.rstrip(".")
    base = stem.split(".", 1)[0]
    if base.upper() in _WINDOWS_RESERVED:
        stem = base + "_" + stem[len(base):]
    altered = stem != rendered or not stem
    if altered or len(stem) + len(extension) > max_length:
        room = max_length - len(extension) - 1 - _HASH_LENGTH
        stem = stem[:room]
        digest = hashlib.sha256(identifier.key.encode("utf-8", "surrogatepass")).hexdigest()[:_HASH_LENGTH]
        stem = f"{stem}_{digest}" if stem else digest
    return stem + extension


def safe_parse(value: object, hint: IdType | None = None) -> Identifier | None:
    """*value* as an identifier (of type *hint* where given), or None where it is empty or not one."""
    if value in (None, ""):
        return None
    try:
        return parse_identifier(value, hint=hint)
    except (ValueError, TypeError):
        return None
