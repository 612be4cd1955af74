"""Who we are to the services (:class:`Identification`), text-setting hygiene, and the small readers of the
environment: with :func:`paperfetch.settings.load_settings`, the only readers of ``PAPERFETCH_*`` variables.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Mapping

from paperfetch import defaults
from paperfetch.errors import ConfigurationError
from paperfetch.redact import register_secrets

__all__ = [
    "CACHE_DIR_ENV", "CONFIG_ENV", "Identification", "LOCK_TIMEOUT_ENV", "STATE_ENV", "clean_setting", "default_config_path",
    "endpoint_env_var", "env_cache_dir", "env_state", "environment", "lock_timeout_s", "mask",
    "read_toml_table", "without_userinfo",
]


def mask(value: object) -> str:
    """How a secret setting is shown: ``None``, or ``'***'``."""
    return "None" if value is None else "'***'"


_CONTROL_CHARACTERS = frozenset(chr(c) for c in (*range(0x00, 0x20), *range(0x7F, 0xA0))) | {"\u2028", "\u2029"}


def without_userinfo(text: str) -> str:
    """*text* with the ``user:password@`` of any URL in it masked (a Redis URL's password, say)."""
    return re.sub(r"//[^/@\s]*@", "//***@", text)


def clean_setting(name: str, value: str | None) -> str | None:
    """*value* of text setting *name*, stripped (``None`` when nothing is left). A control character inside
    (header injection) raises :class:`ConfigurationError` naming its position, never a secret's value (the
    e-mail's, a key's)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ConfigurationError(f"{name} must be text, not {type(value).__name__}")
    stripped = value.strip()
    for index, character in enumerate(stripped):
        if character in _CONTROL_CHARACTERS:
            shown = "(value not shown)" if name == "email" or "key" in name else repr(without_userinfo(stripped))
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
        parts = [f"{f.name}={repr(self.tool) if f.name == 'tool' else mask(getattr(self, f.name))}" for f in fields(self)]
        return f"Identification({', '.join(parts)})"

    def secrets(self) -> list[str]:
        """The secret values present, for scrubbing (cassettes, logs)."""
        return [v for v in (self.email, self.openalex_api_key, self.ncbi_api_key, self.s2_api_key) if v]


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


def environment(environ: Mapping[str, str] | None = None) -> Mapping[str, str]:
    return os.environ if environ is None else environ


def env_state(environ: Mapping[str, str] | None = None) -> str:
    """The host-state store ``$PAPERFETCH_STATE`` names, else ``"sqlite"`` (the file in the user cache directory)."""
    return clean_setting(STATE_ENV, environment(environ).get(STATE_ENV)) or defaults.STATE


def endpoint_env_var(name: str) -> str:
    """The environment variable that overrides the base URL of service *name*: ``PAPERFETCH_<NAME>_URL``."""
    return f"PAPERFETCH_{name.upper()}_URL"


def env_cache_dir(environ: Mapping[str, str] | None = None) -> Path | None:
    """The metadata cache's folder ``$PAPERFETCH_CACHE_DIR`` names (``~`` expanded); None when unset or empty."""
    named = clean_setting(CACHE_DIR_ENV, environment(environ).get(CACHE_DIR_ENV))
    return Path(named).expanduser() if named else None


def lock_timeout_s(environ: Mapping[str, str] | None = None) -> float:
    """How long a SQLite file locked by another process is waited for: ``$PAPERFETCH_LOCK_TIMEOUT_S``,
    else :data:`paperfetch.defaults.LOCK_TIMEOUT_S` (read at each call, so a test may set it short)."""
    named = environment(environ).get(LOCK_TIMEOUT_ENV, "").strip()
    if named:
        try:
            value = float(named)
        except ValueError:
            raise ConfigurationError(f"{LOCK_TIMEOUT_ENV} must be a number of seconds, not {named!r}") from None
        if value >= 0:
            return value
        raise ConfigurationError(f"{LOCK_TIMEOUT_ENV} must be >= 0, not {named!r}")
    return float(defaults.LOCK_TIMEOUT_S)


def default_config_path(environ: Mapping[str, str] | None = None) -> Path:
    """``$PAPERFETCH_CONFIG``, or ``config.toml`` in the user config directory (platformdirs)."""
    named = environment(environ).get(CONFIG_ENV)
    if named:
        return Path(named).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir("paperfetch", appauthor=False)) / CONFIG_FILE_NAME


def read_toml_table(path: Path) -> dict[str, Any]:
    """The ``[paperfetch]`` table (or the top-level keys) of the TOML file at *path*; ``{}`` when there is no file."""
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
    table = data.get("paperfetch", data)
    return {k: v for k, v in table.items() if k != "paperfetch"}
