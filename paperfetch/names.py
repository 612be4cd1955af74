"""Author names, typed as the services give them: a person (family with its particle, given) or an organisation.

One name is a dict in CSL-JSON's shape, so it goes to CSL-JSON as it is and to BibTeX and RIS by
:mod:`paperfetch.export`: ``{"family": "Lloyd", "given": "C. J."}``, ``{"family": "van der Berg", "given": "K."}``
(a particle stays in the family name, so every reader shows it there) or ``{"literal": "World Health
Organization"}``. An ``authors`` cell holds a list of them, in the work's order (docs/export.md).
"""

from __future__ import annotations

import ast
import json
import re
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["Name", "PARTICLES", "from_crossref", "from_europepmc", "from_openalex", "from_pubmed", "initials",
           "name_text", "names_from", "names_text", "organisation", "parse_name", "person", "transliterate"]

#: One author: CSL-JSON's name object (``family``/``given``/``non-dropping-particle``/``suffix``, or ``literal``).
Name = dict[str, str]

#: Lower-case words that open a family name and stay in it (``van der Berg``, ``de la Cruz``, ``dos Santos``).
PARTICLES = frozenset({
    "van", "von", "der", "den", "de", "del", "della", "des", "di", "da", "dos", "das", "du", "la", "le", "ten", "ter",
    "zu", "zum", "zur", "los", "las", "af", "av", "al", "el", "bin", "ibn", "y", "op", "het", "'t", "d'", "l'", "lo",
    "dello", "degli",
})

#: Words that make an untyped name an organisation (a person's name never holds them).
_ORGANISATION_WORDS = frozenset({
    "organization", "organisation", "foundation", "consortium", "collaboration", "collaborators", "collaborative",
    "group", "committee", "society", "association", "institute", "institutes", "university", "network", "council",
    "agency", "department", "ministry", "center", "centre", "team", "investigators", "working", "initiative",
    "alliance", "commission", "federation", "programme", "project", "services", "office", "trial", "registry",
    "panel", "taskforce", "academy", "college", "hospital", "laboratory", "inc", "ltd", "gmbh", "corporation",
    "company", "bureau", "survey", "national", "international",
})

_SPACE_RE = re.compile(r"\s+")
#: One to five letters of any script, each maybe dotted: ``CJ``, ``C. J.``, ``J-P``, ``Ö``, ``Γ``.
_INITIALS_RE = re.compile(r"^(?:[^\W\d_]\.?[\s-]*){1,5}$")


def _clean(value: Any) -> str:
    """A name part as one line of text; empty for anything that is not text."""
    return _SPACE_RE.sub(" ", value).strip() if isinstance(value, str) else ""


def initials(text: str) -> str:
    """``CJ`` → ``C. J.``; ``AWJM`` → ``A. W. J. M.``; ``C.J.`` and ``C J`` too; ``J-P`` → ``J.-P.``."""
    text = _clean(text)
    if "-" in text:
        return "-".join(initials(part) for part in text.split("-"))
    letters = [c for c in text if c.isalpha()]
    return " ".join(f"{c}." for c in letters)


def _given(given: str, initials_hint: str = "") -> str:
    """A given name with its initials dotted: ``Luisa N`` → ``Luisa N.``; ``CJ`` (PubMed's initials) → ``C. J.``."""
    given = _clean(given)
    if not given:
        return initials(initials_hint) if initials_hint else ""
    if _INITIALS_RE.match(given) and (len(given.replace(".", "").replace(" ", "")) <= 1 or given.isupper()):
        return initials(given)
    return " ".join(f"{word}." if len(word) == 1 and word.isupper() else word for word in given.split(" "))


def person(family: str, given: str = "", *, suffix: str = "", initials_hint: str = "") -> Name:
    """A person: particles stay in *family* (``van der Berg``), and trailing ones of *given* (``Ludwig van``) move
    to it; initials are dotted (``C. J.``)."""
    family, given = _clean(family), _given(given, initials_hint)
    words = family.split(" ")
    given_words = given.split(" ") if given else []
    while len(given_words) > 1 and given_words[-1] in PARTICLES:
        words.insert(0, given_words.pop())
    name: Name = {"family": " ".join(words)}
    if given_words:
        name["given"] = " ".join(given_words)
    if _clean(suffix):
        name["suffix"] = _clean(suffix)
    return name


def organisation(name: str) -> Name:
    """A corporate or collective author, kept whole (``{World Health Organization}`` in BibTeX)."""
    return {"literal": _clean(name)}


def _looks_like_organisation(text: str) -> bool:
    words = {w.strip(".,;:()").lower() for w in text.split(" ")}
    return bool(words & _ORGANISATION_WORDS) or any(c.isdigit() for c in text)


def parse_name(text: str) -> Name | None:
    """An untyped name as one string: ``Family, Given``, PubMed's ``Smith JA``, ``Given Family``
    (``Ludwig van Beethoven``), or an organisation (``World Health Organization``); None when empty."""
    text = _clean(text)
    if not text:
        return None
    if text.startswith("{") and text.endswith("}"):
        return organisation(text[1:-1])
    if _looks_like_organisation(text):
        return organisation(text)
    if "," in text:
        family, _, given = text.partition(",")
        return person(family, given)
    words = text.split(" ")
    if len(words) == 1:
        return {"family": words[0]} if words[0][:1].isupper() or not words[0].isascii() else organisation(text)
    if _INITIALS_RE.match(words[-1]) and words[-1].replace(".", "").isupper() and len(words[-1].replace(".", "")) <= 5:
        return person(" ".join(words[:-1]), words[-1])  # PubMed's "Last FM"
    start = next((i for i in range(len(words) - 1) if _opens_particle(words, i)), len(words) - 1)
    return person(" ".join(words[start:]), " ".join(words[:start]))


def _opens_particle(words: list[str], i: int) -> bool:
    """Whether ``words[i]`` opens the family name's particle: a lower-case particle (``van der Meulen``), or a
    capitalised one followed by a lower-case one (``Van der Meulen``, where ``Van`` alone may be a given name)."""
    word = words[i]
    if word in PARTICLES:
        return True
    return word.lower() in PARTICLES and i + 2 < len(words) and words[i + 1] in PARTICLES


def from_pubmed(author: Any) -> Name | None:
    """One PubMed ``<Author>`` element: ``LastName`` + ``ForeName`` (or ``Initials``) + ``Suffix``, or its
    ``CollectiveName`` as an organisation."""
    parts = {child.tag: "".join(child.itertext()) for child in author}
    return _typed(parts, "LastName", "ForeName", "CollectiveName", suffix="Suffix", initials="Initials")


def _typed(author: Any, family: str, given: str, collective: str, *, suffix: str = "", initials: str = "") -> Name | None:
    """A name from a service's typed fields (their keys given): a person, else the collective name, else None."""
    if not isinstance(author, Mapping):
        return None
    last = _clean(author.get(family))
    if last:
        return person(last, _clean(author.get(given)), suffix=_clean(author.get(suffix)),
                      initials_hint=_clean(author.get(initials)))
    name = _clean(author.get(collective))
    return organisation(name) if name else None


def from_crossref(author: Mapping[str, Any]) -> Name | None:
    """One Crossref ``author``: ``family``/``given``/``suffix``; a ``name`` alone is an organisation."""
    return _typed(author, "family", "given", "name", suffix="suffix")


def from_openalex(authorship: Mapping[str, Any]) -> Name | None:
    """One OpenAlex authorship: its ``raw_author_name`` (else the author's ``display_name``), split as
    :func:`parse_name` does (OpenAlex gives no given/family split)."""
    if not isinstance(authorship, Mapping):
        return None
    author = authorship.get("author")
    shown = author.get("display_name") if isinstance(author, Mapping) else None
    return parse_name(_clean(authorship.get("raw_author_name")) or _clean(shown))


def from_europepmc(author: Mapping[str, Any]) -> Name | None:
    """One Europe PMC ``authorList.author``: ``lastName``/``firstName``/``initials``, or ``collectiveName``, else
    its ``fullName`` parsed."""
    typed = _typed(author, "lastName", "firstName", "collectiveName", initials="initials")
    return typed or (parse_name(_clean(author.get("fullName"))) if isinstance(author, Mapping) else None)


def names_from(value: Any) -> list[Name]:
    """An ``authors`` cell as names: a list of name dicts (kept), the same list as JSON or as a CSV report writes
    it (``[{'family': …}]``), or text ``"Smith JA; {WHO}"`` (parsed)."""
    if isinstance(value, str) and value.lstrip().startswith("[{"):
        value = _listed(value)
    if isinstance(value, str):
        items: Iterable[Any] = value.split(";")
    elif isinstance(value, Iterable) and not isinstance(value, (bytes, Mapping)):
        items = value
    else:
        return []
    out: list[Name] = []
    for item in items:
        if isinstance(item, Mapping):
            name = {str(k): _clean(v) for k, v in item.items() if _clean(v)}
            if name.get("literal") or name.get("family"):
                out.append(name)
        elif isinstance(item, str) and (parsed := parse_name(item)):
            out.append(parsed)
    return out


def _listed(text: str) -> Any:
    """A list of dicts written as JSON or as Python's repr (a CSV report's cell); the text itself otherwise."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text


def name_text(name: Name) -> str:
    """One name to read (and RIS's ``AU``): ``Lloyd, C. J.``, ``Smith, J., Jr.``, ``World Health Organization``."""
    if "literal" in name:
        return name["literal"]
    family = " ".join(p for p in (name.get("non-dropping-particle"), name.get("family")) if p)
    given = ", ".join(p for p in (name.get("given"), name.get("suffix")) if p)
    return f"{family}, {given}" if given else family


def names_text(names: Any) -> str:
    """Names as one line to read: ``Lloyd, C. J.; van der Berg, K.; World Health Organization``."""
    return "; ".join(map(name_text, names_from(names)))


#: Letters NFKD does not take apart into ASCII, spelled as library catalogues do.
_SPELLED = {"ß": "ss", "æ": "ae", "Æ": "AE", "ø": "o", "Ø": "O", "œ": "oe", "Œ": "OE", "ł": "l", "Ł": "L", "đ": "d",
            "Đ": "D", "ð": "d", "þ": "th", "ı": "i"}
_GREEK = dict(zip("αβγδεζηθικλμνξοπρστυφχψωάέήίόύώς", [
    "a", "b", "g", "d", "e", "z", "e", "th", "i", "k", "l", "m", "n", "x", "o", "p", "r", "s", "t", "y", "ph", "ch",
    "ps", "o", "a", "e", "e", "i", "o", "y", "o", "s"]))
_CYRILLIC = dict(zip("абвгдеёжзийклмнопрстуфхцчшщъыьэюяєіїґ", [
    "a", "b", "v", "g", "d", "e", "e", "zh", "z", "i", "i", "k", "l", "m", "n", "o", "p", "r", "s", "t", "u", "f", "kh",
    "ts", "ch", "sh", "shch", "", "y", "", "e", "iu", "ia", "ie", "i", "i", "g"]))


def transliterate(text: str) -> str:
    """*text* in ASCII letters for a citation key: accents dropped, Greek and Cyrillic spelled out, other scripts
    by their Unicode names (:func:`_script_word`)."""
    out = []
    for ch in text:
        low = ch.lower()
        if ch in _SPELLED:
            out.append(_SPELLED[ch])
        elif low in _GREEK or low in _CYRILLIC:
            spelled = _GREEK.get(low) or _CYRILLIC.get(low, "")
            out.append(spelled.capitalize() if ch.isupper() else spelled)
        else:
            plain = unicodedata.normalize("NFKD", ch).encode("ascii", "ignore").decode()
            out.append(plain if plain or not ch.isalpha() else _script_word(ch))
    return "".join(out)


def _script_word(ch: str) -> str:
    """``李`` (``CJK UNIFIED IDEOGRAPH-674E``) → ``u674e``, ``HIRAGANA LETTER KA`` → ``ka``, ``HANGUL SYLLABLE GIM``
    → ``gim``: stable, and a key built from it still starts with a letter."""
    name = unicodedata.name(ch, "")
    if name.startswith("CJK"):
        return f"u{ord(ch):x}"
    words = name.split(" ")
    return words[-1].lower() if words and words[-1].isalpha() else ""
