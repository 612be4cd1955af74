"""Frozen settings that are not the transport's own: who we are to the services, and the environment.

The transport's knobs live on :class:`paperfetch.HttpClient` (their names and
defaults are PyPaperRetriever's contract). This module holds the identity a
service asks for — a contact e-mail, API keys, a tool name — as an immutable
value whose ``repr`` never shows a secret, the effective :class:`Settings`
(arguments > environment > config file > defaults), and it is the **one reader
of** ``PAPERFETCH_*`` **environment variables**: the settings' own variables in
:func:`load_settings`, and the small readers other modules call
(:func:`env_state`, :func:`env_endpoint_url`, :func:`env_cache_dir`,
:func:`lock_timeout_s`, :func:`default_config_path`). No other module reads ``os.environ`` for them.

Every text setting passes :func:`clean_setting`, here, for the CLI and the library alike: surrounding
whitespace is stripped (an e-mail read from a file keeps its newline) and any control character left
(``"\r\nX-Injected: 1"``) is refused with a :class:`ConfigurationError` naming the setting, never
showing a secret's value.

It does not open stores, caches or clients: it only says what the environment asks for.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Mapping

from paperfetch import defaults
from paperfetch.errors import ConfigurationError
from paperfetch.redact import register_secrets

__all__ = [
    "CACHE_DIR_ENV", "CONFIG_ENV", "Identification", "LOCK_TIMEOUT_ENV", "SETTING_NAMES", "STATE_ENV", "Settings",
    "clean_setting", "default_config_path", "endpoint_env_var", "env_cache_dir", "env_endpoint_url", "env_state",
    "load_settings", "lock_timeout_s", "read_config_file", "user_agent_for"
]


def _mask(value: object) -> str:
    return "None" if value is None else "'***'"


_CONTROL_CHARACTERS = frozenset(chr(c) for c in (*range(0x00, 0x20), *range(0x7F, 0xA0))) | {"\u2028", "\u2029"}
#: Settings whose values are never shown, not even in the error that refuses them.
_SECRET_SETTINGS = frozenset({"email", "openalex_api_key", "ncbi_api_key", "s2_api_key"})


def _without_userinfo(text: str) -> str:
    """*text* with the ``user:password@`` of any URL in it masked (a Redis URL's password, say)."""
    import re

    return re.sub(r"//[^/@\s]*@", "//***@", text)


def clean_setting(name: str, value: str | None) -> str | None:
    """*value* of text setting *name* with surrounding whitespace stripped (``None`` when nothing is left).

    A control character left inside (CR, LF, NUL, ESC, DEL, U+2028 …) raises :class:`ConfigurationError`
    naming the setting and the character's position, never the value of a secret (the e-mail, the keys):
    such a value would end up in a header or a URL (header injection) or make a worker fail.
    """
    if value is None:
        return None
    if not isinstance(value, str):
        raise ConfigurationError(f"{name} must be text, not {type(value).__name__}")
    stripped = value.strip()
    for index, character in enumerate(stripped):
        if character in _CONTROL_CHARACTERS:
            shown = "(value not shown)" if name in _SECRET_SETTINGS or "key" in name else repr(_without_userinfo(stripped))
            raise ConfigurationError(
                f"{name} contains a control character (U+{ord(character):04X} at position {index}) {shown}; "
                "give it without line breaks, tabs or other control characters"
            )
    return stripped or None


@dataclass(frozen=True)
class Identification:
    """Who is asking: sent to each service the way that service documents.

    * ``email`` — Unpaywall (required), Crossref and OpenAlex polite pools (``mailto``), NCBI (``email``).
    * ``openalex_api_key`` — OpenAlex ``api_key``, sent only when given.
    * ``ncbi_api_key`` — NCBI E-utilities / ID converter ``api_key`` (10 requests/s instead of 3).
    * ``s2_api_key`` — Semantic Scholar ``x-api-key`` header (1 request/s of one's own, not the shared pool).
    * ``tool`` — NCBI's ``tool`` parameter.
    """

    email: str | None = None
    openalex_api_key: str | None = None
    ncbi_api_key: str | None = None
    s2_api_key: str | None = None
    tool: str = "paperfetch"

    def __post_init__(self) -> None:
        for f in fields(self):  # every field (a key added later too): a frozen value, cleaned once, here
            object.__setattr__(self, f.name, clean_setting(f.name, getattr(self, f.name)))
        if not self.tool:
            object.__setattr__(self, "tool", "paperfetch")
        register_secrets(self.secrets())  # masked in every output of this process from now on

    def __repr__(self) -> str:
        parts = []
        for f in fields(self):
            value = getattr(self, f.name)
            shown = repr(value) if f.name == "tool" else _mask(value)
            parts.append(f"{f.name}={shown}")
        return f"Identification({', '.join(parts)})"

    __str__ = __repr__

    def secrets(self) -> list[str]:
        """The secret values present, for scrubbing (cassettes, logs)."""
        return [v for v in (self.email, self.openalex_api_key, self.ncbi_api_key, self.s2_api_key) if v]


# ---------------------------------------------------------------------------- settings
#: The config file's name inside the user config directory (platformdirs).
CONFIG_FILE_NAME = "config.toml"
#: Environment variable naming another config file.
CONFIG_ENV = "PAPERFETCH_CONFIG"
#: Environment variable naming the host-state store when no spec is given (:func:`paperfetch.state.open_store`).
STATE_ENV = "PAPERFETCH_STATE"
#: Environment variable naming the folder of the metadata cache (:mod:`paperfetch.cache`).
CACHE_DIR_ENV = "PAPERFETCH_CACHE_DIR"
#: Environment variable overriding :data:`paperfetch.defaults.LOCK_TIMEOUT_S` (seconds).
LOCK_TIMEOUT_ENV = "PAPERFETCH_LOCK_TIMEOUT_S"
_SECRET_FIELDS = _SECRET_SETTINGS


@dataclass(frozen=True)
class _Field:
    name: str
    kind: type
    default: Any
    env: tuple[str, ...]
    help: str


_FIELDS: tuple[_Field, ...] = (
    _Field("email", str, None, ("PAPERFETCH_EMAIL",), "contact e-mail (Unpaywall requires one)"),
    _Field("openalex_api_key", str, None, ("PAPERFETCH_OPENALEX_API_KEY",), "OpenAlex API key"),
    _Field("ncbi_api_key", str, None, ("PAPERFETCH_NCBI_API_KEY", "NCBI_API_KEY"), "NCBI E-utilities API key"),
    _Field("s2_api_key", str, None, ("PAPERFETCH_S2_API_KEY",), "Semantic Scholar API key"),
    _Field("out_dir", str, defaults.OUT_DIR, ("PAPERFETCH_OUT",), "output folder (also holds the resume ledger)"),
    _Field("workers", int, None, ("PAPERFETCH_WORKERS",), "worker threads (none: by the number of hosts)"),
    _Field("delay_min_s", float, None, ("PAPERFETCH_DELAY_MIN",), "minimum seconds between requests to a host"),
    _Field("delay_max_s", float, None, ("PAPERFETCH_DELAY_MAX",), "maximum seconds between requests to a host"),
    _Field("max_retries", int, defaults.MAX_RETRIES, ("PAPERFETCH_MAX_RETRIES",), "retries per request"),
    _Field("state", str, defaults.STATE, (STATE_ENV,),
           "host-state store: 'sqlite' (user cache dir), a path, 'sqlite:///path', 'redis://host:port/db' or 'memory'"),
)
SETTING_NAMES = tuple(f.name for f in _FIELDS)


def _environ(environ: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if environ is None else environ


def env_state(environ: Mapping[str, str] | None = None) -> str:
    """The host-state store ``$PAPERFETCH_STATE`` names, else ``"sqlite"`` (the file in the user cache directory)."""
    return clean_setting(STATE_ENV, _environ(environ).get(STATE_ENV)) or defaults.STATE


def endpoint_env_var(name: str) -> str:
    """The environment variable that overrides the base URL of service *name*: ``PAPERFETCH_<NAME>_URL``."""
    return f"PAPERFETCH_{name.upper()}_URL"


def env_endpoint_url(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    """``$PAPERFETCH_<NAME>_URL`` (a source's base URL, or ``doi`` for the DOI resolver); None when unset or empty."""
    return clean_setting(endpoint_env_var(name), _environ(environ).get(endpoint_env_var(name)) or None)


def env_cache_dir(environ: Mapping[str, str] | None = None) -> Path | None:
    """The metadata cache's folder ``$PAPERFETCH_CACHE_DIR`` names (``~`` expanded); None when unset or empty."""
    named = clean_setting(CACHE_DIR_ENV, _environ(environ).get(CACHE_DIR_ENV))
    return Path(named).expanduser() if named else None


def lock_timeout_s(environ: Mapping[str, str] | None = None) -> float:
    """How long a SQLite file locked by another process is waited for: ``$PAPERFETCH_LOCK_TIMEOUT_S``,
    else :data:`paperfetch.defaults.LOCK_TIMEOUT_S` (read at each call, so a test may set it short)."""
    named = _environ(environ).get(LOCK_TIMEOUT_ENV, "").strip()
    if named:
        try:
            value = float(named)
        except ValueError:
            raise ConfigurationError(f"{LOCK_TIMEOUT_ENV} must be a number of seconds, not {named!r}") from None
        if value >= 0:
            return value
        raise ConfigurationError(f"{LOCK_TIMEOUT_ENV} must be >= 0, not {named!r}")
    return float(defaults.LOCK_TIMEOUT_S)


def default_config_path() -> Path:
    """``$PAPERFETCH_CONFIG``, or ``config.toml`` in the user config directory (platformdirs)."""
    named = os.environ.get(CONFIG_ENV)
    if named:
        return Path(named).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir("paperfetch", appauthor=False)) / CONFIG_FILE_NAME


@dataclass(frozen=True)
class Settings:
    """The effective settings: arguments > environment > config file > defaults.

    Made by :func:`load_settings`; ``origin`` says where each value came from
    (``"argument"``, ``"env PAPERFETCH_EMAIL"``, ``"file /…/config.toml"``, ``"default"``).
    The ``repr`` masks the e-mail and the API keys; creating one registers them for redaction.
    """

    email: str | None = None
    openalex_api_key: str | None = None
    ncbi_api_key: str | None = None
    s2_api_key: str | None = None
    out_dir: str = defaults.OUT_DIR
    workers: int | None = None
    delay_min_s: float | None = None
    delay_max_s: float | None = None
    max_retries: int = defaults.MAX_RETRIES
    #: the host-state store (:func:`paperfetch.state.open_store`); a password in a Redis URL is never shown
    state: str = defaults.STATE
    origin: Mapping[str, str] = field(default_factory=dict, compare=False)
    config_path: Path | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        register_secrets([self.email, self.openalex_api_key, self.ncbi_api_key, self.s2_api_key])

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={self.shown(name)}" for name in SETTING_NAMES)
        return f"Settings({shown})"

    __str__ = __repr__

    def shown(self, name: str) -> str:
        """The value of setting *name* for people: secrets masked."""
        value = getattr(self, name)
        if name == "state" and isinstance(value, str) and "@" in value:
            import re

            value = re.sub(r"//[^/@]*@", "//***@", value)
        return _mask(value) if name in _SECRET_FIELDS else repr(value)

    @property
    def identification(self) -> Identification:
        return Identification(email=self.email, openalex_api_key=self.openalex_api_key, ncbi_api_key=self.ncbi_api_key,
                              s2_api_key=self.s2_api_key)

    def rows(self) -> list[tuple[str, str, str]]:
        """``(name, shown value, origin)`` for each setting, for ``paperfetch config``."""
        return [(name, self.shown(name), self.origin.get(name, "default")) for name in SETTING_NAMES]


def _convert(spec: _Field, value: Any, where: str) -> Any:
    if value is None:
        return None
    if spec.kind is str:
        if not isinstance(value, str):
            raise ConfigurationError(f"{spec.name} from {where} must be text, not {type(value).__name__}")
        try:
            return clean_setting(spec.name, value)
        except ConfigurationError as exc:
            raise ConfigurationError(f"{exc} (from {where})") from None
    try:
        if isinstance(value, bool):
            raise ValueError
        converted = spec.kind(value)
    except (TypeError, ValueError):
        shown = _mask(value) if spec.name in _SECRET_FIELDS else repr(value)
        raise ConfigurationError(f"{spec.name} from {where} must be a number ({spec.kind.__name__}), not {shown}") from None
    return converted


def read_config_file(path: Path) -> dict[str, Any]:
    """The settings table of the TOML file at *path* (``{}`` when there is no file)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except FileNotFoundError:
        return {}
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigurationError(f"cannot read the config file {path}: {exc}") from None
    table = data.get("paperfetch", data)  # a [paperfetch] table, or top-level keys
    unknown = sorted(set(table) - set(SETTING_NAMES) - {"paperfetch"})
    if unknown:
        raise ConfigurationError(f"unknown setting(s) {unknown} in {path}; known: {', '.join(SETTING_NAMES)}")
    return dict(table)


def load_settings(
    arguments: Mapping[str, Any] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    config_path: Path | str | None = None,
) -> Settings:
    """Settings from *arguments* (``None`` values count as not given) > *environ* > the config file > defaults.

    *environ* defaults to ``os.environ``; *config_path* to :func:`default_config_path`.
    A value that cannot be converted raises :class:`ConfigurationError` naming its source.
    """
    arguments = {k: v for k, v in (arguments or {}).items() if v is not None}
    unknown = sorted(set(arguments) - set(SETTING_NAMES))
    if unknown:
        raise ConfigurationError(f"unknown setting(s) {unknown}; known: {', '.join(SETTING_NAMES)}")
    environ = os.environ if environ is None else environ
    path = Path(config_path).expanduser() if config_path is not None else default_config_path()
    from_file = read_config_file(path)
    values: dict[str, Any] = {}
    origin: dict[str, str] = {}
    for spec in _FIELDS:
        env_name = next((name for name in spec.env if environ.get(name, "").strip()), None)
        if spec.name in arguments:
            value, where = arguments[spec.name], "argument"
        elif env_name is not None:
            value, where = environ[env_name], f"env {env_name}"
        elif spec.name in from_file:
            value, where = from_file[spec.name], f"file {path}"
        else:
            value, where = spec.default, "default"
        values[spec.name] = _convert(spec, value, where) if where != "default" else value
        if values[spec.name] is None and where != "default":
            values[spec.name], where = spec.default, "default"
        origin[spec.name] = where
    return Settings(**values, origin=origin, config_path=path)


def user_agent_for(email: str | None) -> str:
    """The User-Agent for a contact *email*: :func:`paperfetch.http.identity.user_agent`, the one builder."""
    from paperfetch.http.identity import user_agent

    return user_agent(email)
