"""The one reader of settings: arguments > environment > config file > defaults, for the library and the CLI
(docs/index.md, "Settings"). Every transport knob is a setting by declaration: the field's name, ``PAPERFETCH_<NAME>``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from paperfetch import defaults
from paperfetch.config import (
    STATE_ENV,
    Identification,
    clean_setting,
    default_config_path,
    endpoint_env_var,
    environment,
    mask,
    read_toml_table,
    without_userinfo,
)
from paperfetch.errors import ConfigurationError
from paperfetch.http.config import KNOBS, TransportConfig
from paperfetch.redact import register_secrets

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = [
    "ENDPOINT_NAMES", "ENV_VARS", "SETTING_NAMES", "Settings", "TRANSPORT_SETTING_NAMES", "load_settings", "read_config_file",
    "refuse_differing", "setting_arguments",
]

#: The services whose base URL can be pointed elsewhere (``endpoints=`` or ``PAPERFETCH_<NAME>_URL``).
ENDPOINT_NAMES: tuple[str, ...] = ("unpaywall", "openalex", "crossref", "europepmc", "ncbi_idconv", "ncbi_eutils", "arxiv",
                                   "doi", "semanticscholar", "biorxiv", "pmc")
_SECRETS = frozenset({"email", "openalex_api_key", "ncbi_api_key", "s2_api_key"})


@dataclass(frozen=True)
class _Own:
    """A setting that is not the transport's: its type, default, variables and help line."""

    name: str
    kind: type
    default: Any
    env: tuple[str, ...]
    help: str


_OWN: tuple[_Own, ...] = (
    _Own("email", str, None, ("PAPERFETCH_EMAIL",), "contact e-mail (Unpaywall requires one)"),
    _Own("openalex_api_key", str, None, ("PAPERFETCH_OPENALEX_API_KEY",), "OpenAlex API key"),
    _Own("ncbi_api_key", str, None, ("PAPERFETCH_NCBI_API_KEY", "NCBI_API_KEY"), "NCBI E-utilities API key"),
    _Own("s2_api_key", str, None, ("PAPERFETCH_S2_API_KEY",), "Semantic Scholar API key"),
    _Own("out_dir", str, defaults.OUT_DIR, ("PAPERFETCH_OUT",), "output folder (also holds the resume ledger)"),
    _Own("workers", int, None, ("PAPERFETCH_WORKERS",), "worker threads (none: by the number of hosts)"),
    _Own("state", str, defaults.STATE, (STATE_ENV,),
         "host-state store: 'sqlite' (user cache dir), a path, 'sqlite:///path', 'redis://host:port/db' or 'memory'"),
    _Own("cache_dir", str, None, ("PAPERFETCH_CACHE_DIR",), "folder of the metadata cache (none: the user cache dir)"),
    _Own("skip_retracted", bool, False, ("PAPERFETCH_SKIP_RETRACTED",),
         "a paper a source calls retracted gets status 'retracted', not downloaded"),
)
_OWN_NAMES = tuple(spec.name for spec in _OWN)

#: Knobs the Retriever derives rather than reads: the contact e-mail is the ``email`` setting.
_DERIVED_KNOBS = frozenset({"contact_email"})
#: The transport knobs that are settings, in the order of :class:`TransportConfig`'s fields.
TRANSPORT_SETTING_NAMES: tuple[str, ...] = tuple(f.name for f in fields(TransportConfig)
                                                 if f.init and f.name not in _DERIVED_KNOBS)
SETTING_NAMES: tuple[str, ...] = _OWN_NAMES + TRANSPORT_SETTING_NAMES
#: Short variable names read before the ``PAPERFETCH_<KNOB>`` form.
_ENV_ALIASES: Mapping[str, tuple[str, ...]] = {"delay_min_s": ("PAPERFETCH_DELAY_MIN",), "delay_max_s": ("PAPERFETCH_DELAY_MAX",)}
#: Where the settings' defaults differ from a bare client's: a Retriever reads robots.txt for web pages.
_SETTINGS_DEFAULTS: Mapping[str, Any] = {"respect_robots_txt": defaults.RESPECT_ROBOTS_TXT}


def _knob_env(name: str) -> tuple[str, ...]:
    return (*_ENV_ALIASES.get(name, ()), f"PAPERFETCH_{name.upper()}")


def _parse_bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise ValueError(text)


def _parse_timeout(text: str) -> float | tuple[float, float]:
    parts = [float(p) for p in text.replace(",", " ").split()]
    if len(parts) == 1:
        return parts[0]
    if len(parts) == 2:
        return (parts[0], parts[1])
    raise ValueError(text)


def _knob_parser(name: str) -> Callable[[str], Any] | None:
    """How a knob's text (an environment variable) becomes its value; None: not settable from text."""
    annotation = str(next(f.type for f in fields(TransportConfig) if f.name == name))
    if annotation == "bool":
        return _parse_bool
    if annotation.startswith("int"):
        return int
    if annotation.startswith("float | tuple"):
        return _parse_timeout
    if annotation.startswith("float"):
        return float
    if annotation.startswith("str") or annotation.endswith("| str"):
        return str
    return None  # mappings and collections: an argument or the config file only


#: environment variable → the setting it gives, for every setting read from the environment
ENV_VARS: Mapping[str, str] = {
    **{env: spec.name for spec in _OWN for env in spec.env},
    **{env: name for name in TRANSPORT_SETTING_NAMES if _knob_parser(name) is not None for env in _knob_env(name)},
    **{endpoint_env_var(name): f"endpoints.{name}" for name in ENDPOINT_NAMES},
}


@dataclass(frozen=True)
class Settings:
    """The effective settings (:func:`load_settings`). ``origin`` says where each value came from
    (``"argument"``, ``"env PAPERFETCH_EMAIL"``, ``"file /…/config.toml"``, ``"default"``); a transport knob reads
    through to :attr:`transport`. The ``repr`` masks the secrets; creating one registers them for redaction.
    """

    email: str | None = None
    openalex_api_key: str | None = None
    ncbi_api_key: str | None = None
    s2_api_key: str | None = None
    out_dir: str = defaults.OUT_DIR
    workers: int | None = None
    #: the host-state store (:func:`paperfetch.state.open_store`); a password in a Redis URL is never shown
    state: str = defaults.STATE
    cache_dir: str | None = None
    #: a paper a source calls retracted ends ``retracted`` without a PDF request (paperfetch.integrity)
    skip_retracted: bool = False
    #: base URLs given for services (name → URL); the others use the service's own
    endpoints: Mapping[str, str] = field(default_factory=dict)
    transport: TransportConfig = field(default_factory=lambda: TransportConfig(**_SETTINGS_DEFAULTS))
    origin: Mapping[str, str] = field(default_factory=dict, compare=False)
    config_path: Path | None = field(default=None, compare=False)
    #: the transport knobs that were given (not defaults), as given: what :meth:`with_transport` keeps on top
    given: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        register_secrets([self.email, self.openalex_api_key, self.ncbi_api_key, self.s2_api_key])

    def __getattr__(self, name: str) -> Any:
        if name in KNOBS:  # one value: the transport's
            return getattr(self.transport, name)
        raise AttributeError(f"{type(self).__name__!r} has no attribute {name!r}")

    def __repr__(self) -> str:
        return f"Settings({', '.join(f'{name}={self.shown(name)}' for name in _OWN_NAMES)}, transport=…)"

    __str__ = __repr__

    def shown(self, name: str) -> str:
        """The value of setting *name* for people: secrets masked, a URL's password masked."""
        if name.startswith("endpoints."):
            return repr(without_userinfo(self.endpoints.get(name.split(".", 1)[1], "")))
        value = getattr(self, name)
        if name in _SECRETS:
            return mask(value)
        if isinstance(value, Enum):
            value = value.value
        if isinstance(value, (frozenset, set)):
            value = sorted(value)
        if isinstance(value, Mapping):
            value = dict(sorted(value.items()))
        return without_userinfo(repr(value)) if isinstance(value, str) else repr(value)

    @property
    def identification(self) -> Identification:
        return Identification(email=self.email, openalex_api_key=self.openalex_api_key, ncbi_api_key=self.ncbi_api_key,
                              s2_api_key=self.s2_api_key)

    def rows(self) -> list[tuple[str, str, str]]:
        """``(name, shown value, origin)`` for every setting a run uses (``paperfetch config``): the
        settings, the base URLs given, then the transport's knobs."""
        names = [*_OWN_NAMES, *(f"endpoints.{n}" for n in sorted(self.endpoints)), *TRANSPORT_SETTING_NAMES]
        return [(name, self.shown(name), self.origin.get(name, "default")) for name in names]

    def frame(self) -> pd.DataFrame:
        """:meth:`rows` as a DataFrame (``setting``, ``value``, ``origin``), secrets masked as there."""
        import pandas as pd

        return pd.DataFrame(self.rows(), columns=["setting", "value", "origin"])

    def _repr_html_(self) -> str:
        """A notebook shows the settings as :meth:`frame`'s table."""
        return str(self.frame().to_html(index=False))

    def with_transport(self, derived: Mapping[str, Any], *, origin: str) -> "Settings":
        """These settings over a transport whose unset knobs come from *derived* (a Retriever's sources); a given
        knob wins, and for a mapping the given entries win key by key."""
        values = {**_SETTINGS_DEFAULTS, **derived}
        origins = dict(self.origin)
        for name, value in derived.items():
            if name in TRANSPORT_SETTING_NAMES and name not in self.given:
                origins[name] = origin
        for name, value in self.given.items():
            if isinstance(value, Mapping) and isinstance(derived.get(name), Mapping):
                values[name] = {**derived[name], **value}
                origins[name] = f"{self.origin.get(name, 'argument')} over {origin}"
            else:
                values[name] = value
        transport = _transport(values, origins)
        return _replace(self, transport=transport, origin=origins)

    def with_client(self, config: TransportConfig) -> "Settings":
        """These settings with a caller's client's transport, every knob's origin ``"http= client"``."""
        origins = {**self.origin, **{name: "http= client" for name in TRANSPORT_SETTING_NAMES}}
        return _replace(self, transport=config, origin=origins, given={})


def _replace(settings: Settings, **changes: Any) -> Settings:
    values = {f.name: getattr(settings, f.name) for f in fields(settings)}
    values.update(changes)
    return Settings(**values)


def _transport(values: Mapping[str, Any], origin: Mapping[str, str]) -> TransportConfig:
    """A validated :class:`TransportConfig`; a refused value's error names where it came from."""
    try:
        return TransportConfig(**values)
    except ConfigurationError as exc:
        named = [f"{name} from {origin[name]}" for name in values if name in origin and name in str(exc)
                 and origin[name] != "default"]
        raise ConfigurationError(f"{exc} ({'; '.join(named)})" if named else str(exc)) from None
    except TypeError as exc:
        raise ConfigurationError(f"transport settings: {exc}") from None


def _convert_own(spec: _Own, value: Any, where: str) -> Any:
    if spec.kind is str:
        if not isinstance(value, str):
            raise ConfigurationError(f"{spec.name} from {where} must be text, not {type(value).__name__}")
        try:
            return clean_setting(spec.name, value)
        except ConfigurationError as exc:
            raise ConfigurationError(f"{exc} (from {where})") from None
    if spec.kind is bool:
        try:
            return value if isinstance(value, bool) else _parse_bool(str(value))
        except ValueError:
            raise ConfigurationError(f"{spec.name} from {where} must be true or false, not {value!r}") from None
    try:
        if isinstance(value, bool):
            raise ValueError
        return spec.kind(value)
    except (TypeError, ValueError):
        shown = mask(value) if spec.name in _SECRETS else repr(value)
        raise ConfigurationError(f"{spec.name} from {where} must be a number ({spec.kind.__name__}), not {shown}") from None


def _convert_knob(name: str, value: Any, where: str) -> Any:
    """A transport knob's value from *where*: text (the environment) parsed by the field's type; a TOML
    or Python value as it is (the config validates it)."""
    if not isinstance(value, str) or where == "argument":
        if isinstance(value, str):
            return clean_setting(name, value)
        return tuple(value) if isinstance(value, list) and name == "timeout" else value
    parser = _knob_parser(name)
    text = clean_setting(name, value)
    if parser is None or text is None:
        return text
    try:
        return parser(text)
    except ValueError:
        kind = getattr(parser, "__name__", "value").lstrip("_").replace("parse_", "")
        raise ConfigurationError(f"{name} from {where} must be a {kind}, not {text!r}") from None


def read_config_file(path: Path) -> dict[str, Any]:
    """The settings table of the TOML file at *path* (``{}`` when there is no file); an unknown name is refused."""
    table = read_toml_table(path)
    unknown = sorted(set(table) - set(SETTING_NAMES))
    if unknown:
        raise ConfigurationError(f"unknown setting(s) {unknown} in {path}; known: {', '.join(SETTING_NAMES)}")
    return table


def load_settings(
    arguments: Mapping[str, Any] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    config_path: Path | str | None = None,
    endpoints: Mapping[str, str] | None = None,
) -> Settings:
    """Settings from *arguments* (``None``: not given) > *environ* (default the process's) > the config file >
    defaults. *endpoints*: base URLs by service name. Raises :class:`ConfigurationError` naming a bad value's source.
    """
    arguments = {k: v for k, v in (arguments or {}).items() if v is not None}
    unknown = sorted(set(arguments) - set(SETTING_NAMES))
    if unknown:
        raise ConfigurationError(f"unknown setting(s) {unknown}; known: {', '.join(SETTING_NAMES)}")
    bad = sorted(set(endpoints or {}) - set(ENDPOINT_NAMES))
    if bad:
        raise ConfigurationError(f"unknown endpoint name(s) {bad}; choose from {', '.join(ENDPOINT_NAMES)}")
    environ = environment(environ)
    path = Path(config_path).expanduser() if config_path is not None else default_config_path(environ)
    from_file = read_config_file(path)
    values: dict[str, Any] = {}
    origin: dict[str, str] = {}
    given: dict[str, Any] = {}

    def pick(name: str, env: tuple[str, ...]) -> tuple[Any, str]:
        env_name = next((e for e in env if environ.get(e, "").strip()), None)
        if name in arguments:
            return arguments[name], "argument"
        if env_name is not None:
            return environ[env_name], f"env {env_name}"
        if name in from_file:
            return from_file[name], f"file {path}"
        return None, "default"

    for spec in _OWN:
        value, where = pick(spec.name, spec.env)
        converted = _convert_own(spec, value, where) if where != "default" else None
        values[spec.name], origin[spec.name] = (spec.default, "default") if converted is None else (converted, where)
    for name in TRANSPORT_SETTING_NAMES:
        value, where = pick(name, _knob_env(name) if _knob_parser(name) is not None else ())
        converted = _convert_knob(name, value, where) if where != "default" else None
        if converted is not None:
            given[name], origin[name] = converted, where
        else:
            origin[name] = "default"
    chosen: dict[str, str] = {}
    for name in ENDPOINT_NAMES:
        variable = endpoint_env_var(name)
        if endpoints and endpoints.get(name):
            chosen[name], origin[f"endpoints.{name}"] = endpoints[name], "argument"
        elif environ.get(variable, "").strip():
            chosen[name], origin[f"endpoints.{name}"] = environ[variable], f"env {variable}"
    chosen = {name: clean_setting(f"endpoints[{name!r}]", url) or "" for name, url in chosen.items()}
    transport = _transport({**_SETTINGS_DEFAULTS, **given}, origin)
    return Settings(**values, endpoints=chosen, transport=transport, origin=origin, config_path=path, given=given)


def setting_arguments(named: Mapping[str, Any], http_options: Mapping[str, Any] | None) -> dict[str, Any]:
    """The settings given as arguments: the named ones (None: not given) and the transport knobs of
    *http_options*; a knob given both ways with two values is refused."""
    given = {name: value for name, value in named.items() if value is not None}
    for name, value in (http_options or {}).items():
        if name not in TRANSPORT_SETTING_NAMES:
            raise ConfigurationError(f"http_options: {name!r} is not a transport setting; known: "
                                     f"{', '.join(TRANSPORT_SETTING_NAMES)} (a client of your own: Retriever(http=...))")
        if name in given and given[name] != value:
            raise ConfigurationError(f"{name} given twice: {given[name]!r} and http_options[{name!r}] = {value!r}")
        given[name] = value
    return given


def refuse_differing(arguments: Mapping[str, Any], client: Any) -> None:
    """With ``http=client`` the client's transport settings are the run's: an argument that would change
    one of them is refused, never silently ignored."""
    differing = []
    for name, value in arguments.items():
        if name in TRANSPORT_SETTING_NAMES:
            try:
                wanted = getattr(client.replace(**{name: value}), name)
            except (ConfigurationError, TypeError, ValueError):
                wanted = value
            if wanted != getattr(client, name):
                differing.append(f"{name}={value!r} (the client has {getattr(client, name)!r})")
    if differing:
        raise ConfigurationError(f"Retriever(http=client) runs on the client's transport settings; these arguments "
                                 f"differ from it: {', '.join(differing)}. Set them on the client, or drop http=")
