"""Keep secrets out of logs, events, errors, frames and files (docs/politeness.md, "Events and logging")."""

from __future__ import annotations

import logging
import re
import threading
from typing import Any, Iterable
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

__all__ = [
    "REDACTED", "REDACTOR", "RedactingFilter", "Redactor", "SECRET_PARAMS", "install_log_filter", "redact_exception",
    "redact_frame", "redact_text", "redact_url", "register_secrets"
]

REDACTED = "REDACTED"

#: Query parameter names whose values are secrets, compared case-insensitively.
SECRET_PARAMS = frozenset(
    {"email", "mailto", "api_key", "apikey", "api-key", "key", "token", "access_token", "tool_email", "password"}
)

# The look-behind starts a local part only where its run starts: else a long run is quadratic to scan.
_LOCAL = "A-Za-z0-9._%+-"
_EMAIL_RE = re.compile(rf"(?<![{_LOCAL}])[{_LOCAL}]+(?:@|%40)[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{{2,}}")
_SECRET_PARAM_RE = re.compile(
    r"(?<=[?&;])(" + "|".join(re.escape(p) for p in sorted(SECRET_PARAMS, key=len, reverse=True))
    + r")=([^&#\s\"'<>]*)", re.IGNORECASE)
#: Shorter values would mask ordinary words; API keys and addresses are longer.
MIN_SECRET_LENGTH = 4


#: Characters a URL carries as they are: every other one may be percent-encoded.
_UNRESERVED = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.~-")


def _char_pattern(ch: str) -> str:
    """The pattern for one character of a secret as text may spell it: raw, percent-encoded once or twice (in
    either hex case, the pattern is compiled case-insensitively), a space as ``+`` and a ``+`` read back as a space.
    Each character has its own alternatives, so a URL that encodes some characters and not others is matched too."""
    if ch in _UNRESERVED:
        return re.escape(ch)
    spellings: set[str] = set()
    for read_as in ({" ", "+"} if ch in " +" else {ch}):  # a query's `+` is a space once decoded, and back
        once = quote(read_as, safe="")
        spellings |= {read_as, once, quote(once, safe="")}
    return "(?:" + "|".join(re.escape(s) for s in sorted(spellings, key=len, reverse=True)) + ")"


def _trie_pattern(words: Iterable[str]) -> str:
    """One case-insensitive pattern for any of *words* in any spelling of :func:`_char_pattern`, built as a prefix
    tree so its cost stays linear in the text whatever the number of words; a word that prefixes another is
    optional, so the longest form is masked."""
    trie: dict[str, Any] = {}
    long_words = []
    for word in words:
        if len(word) > _TRIE_DEPTH:  # deeper than the recursion below should go: a plain alternative
            long_words.append(word)
            continue
        node = trie
        for ch in word.lower():
            node = node.setdefault(ch, {})
        node[""] = {}

    def build(node: dict[str, Any]) -> str:
        branches = [_char_pattern(ch) + build(child) for ch, child in sorted(node.items()) if ch]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if "" in node else body

    parts = ["".join(map(_char_pattern, w.lower())) for w in sorted(long_words, key=len, reverse=True)]
    if trie:
        parts.append(build(trie))
    return "|".join(parts)


#: Forms longer than this go into the pattern as plain alternatives (the tree is built recursively).
_TRIE_DEPTH = 400


class Redactor:
    """Masks a set of known secret values (and e-mail-shaped text) in strings.

    >>> r = Redactor(["jane.doe@uni", "SEKRETKEY123"])
    >>> r.redact("GET /w?mailto=jane.doe%40UNI&api_key=sekretkey123")
    'GET /w?mailto=REDACTED&api_key=REDACTED'
    """

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        self._values: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self._lock = threading.Lock()
        self.add(secrets)

    def add(self, secrets: Iterable[str | None]) -> None:
        """Register more secret values (``None`` and empty values are ignored)."""
        new = {s for s in secrets if s and len(s) >= MIN_SECRET_LENGTH} - self._values
        if not new:
            return
        with self._lock:
            self._values |= new
            self._pattern = re.compile(_trie_pattern(self._values), re.IGNORECASE)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Redactor({len(self._values)} secret(s))"

    def redact(self, text: str) -> str:
        """*text* with every known secret value and every e-mail-shaped string masked."""
        pattern = self._pattern
        if pattern is not None:
            text = pattern.sub(REDACTED, text)
        if "@" in text or "%40" in text or "%40".upper() in text:
            text = _EMAIL_RE.sub(REDACTED, text)
        return text


#: The process-wide redactor every output goes through.
REDACTOR = Redactor()


def register_secrets(secrets: Iterable[str | None]) -> None:
    """Add *secrets* (e-mails, API keys) to the values masked everywhere in this process."""
    REDACTOR.add(secrets)


def redact_text(text: str) -> str:
    """Mask the registered secrets, ``key=value`` pairs of secret parameters and e-mail-shaped text (linear in ``len(text)``)."""
    if not text:
        return text
    text = REDACTOR.redact(text)
    if "=" in text:
        text = _SECRET_PARAM_RE.sub(lambda m: f"{m.group(1)}={REDACTED}" if m.group(2) else m.group(0), text)
    return text


def redact_url(url: str) -> str:
    """Return *url* with secret query values and userinfo replaced by ``REDACTED``."""
    if "?" not in url and "@" not in url and "%40" not in url and not len(REDACTOR):
        return url  # nothing that could hold a secret (the common case: called for every event)
    try:
        parts = urlsplit(url)
    except ValueError:
        return redact_text(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{REDACTED}@{netloc.rsplit('@', 1)[1]}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(k.lower() in SECRET_PARAMS for k, _ in pairs):
            query = urlencode([(k, REDACTED if k.lower() in SECRET_PARAMS else v) for k, v in pairs], safe=":/,|")
    return redact_text(urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment)))


def redact_exception(exc: BaseException) -> BaseException:
    """*exc* with its whole chain masked in place, and returned: every ``__cause__``/``__context__`` and every
    exception held in an ``args`` or attribute (urllib3's ``MaxRetryError.reason``), their text ``args`` and text
    attributes (``url``) and a ``request``'s URL, so that ``str``, ``repr`` and a traceback of any of them hold no
    secret (urllib3 writes the query, percent-encoded, into its messages)."""
    seen: set[int] = set()
    todo: list[BaseException] = [exc]
    while todo:
        error = todo.pop()
        if id(error) in seen:
            continue
        seen.add(id(error))
        held = [error.__cause__, error.__context__, *error.args, *getattr(error, "__dict__", {}).values()]
        todo += [item for item in held if isinstance(item, BaseException)]
        try:
            error.args = tuple(redact_text(a) if isinstance(a, str) else a for a in error.args)
        except (AttributeError, TypeError):  # an exception type whose args cannot be set keeps them
            pass
        for name, value in list(getattr(error, "__dict__", {}).items()):
            if isinstance(value, str):
                setattr(error, name, redact_text(value))
            elif isinstance(getattr(value, "url", None), str) and name == "request":
                value.url = redact_url(value.url)
    return exc


class RedactingFilter(logging.Filter):
    """A logging filter masking secrets in a record's message, arguments and traceback; it never drops a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a broken format string: leave it to logging's own error report
            return True
        record.msg = redact_text(message)
        record.args = ()
        if record.exc_info and record.exc_info[1] is not None:  # a handler may format the chain itself
            redact_exception(record.exc_info[1])
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact_text(record.exc_text)
        if record.stack_info:
            record.stack_info = redact_text(record.stack_info)
        return True


_FILTER = RedactingFilter()
#: Loggers under the transport that log our URLs at DEBUG (urllib3's request lines), masked the same way.
_THIRD_PARTY_LOGGERS = ("urllib3.connectionpool", "urllib3.connection", "urllib3.util.retry", "urllib3.response")


def install_log_filter() -> None:
    """Put the redacting filter on every ``paperfetch`` logger and urllib3's (idempotent; each logger needs its own)."""
    ours = [name for name in list(logging.Logger.manager.loggerDict) if name.startswith("paperfetch.")]
    for log in map(logging.getLogger, ("paperfetch", *_THIRD_PARTY_LOGGERS, *ours)):
        if _FILTER not in log.filters:
            log.addFilter(_FILTER)


def redact_frame(frame: Any) -> Any:
    """*frame* (a pandas DataFrame) with :func:`redact_text` applied to every text cell, in place; returned."""
    for column in frame.columns:
        series = frame[column]
        if series.dtype != object and str(series.dtype) not in ("string", "str"):
            continue
        values = series.tolist()
        # plain Python over the values: pandas 3 maps an empty text column to a string array that has no any()
        if not any(isinstance(v, str) for v in values):
            continue
        # an object column stays one (pandas 3 would infer Arrow text, which cannot hold a lone surrogate)
        frame[column] = type(series)([redact_text(v) if isinstance(v, str) else v for v in values], index=series.index,
                                     dtype=object if series.dtype == object else series.dtype)
    return frame
