"""The one home of settings: arguments > environment > config file > defaults, for the library and the CLI
(docs/index.md, "Settings"). Each run option is a field of :class:`Settings` whose metadata names its environment
variables and its help line once; the loader, ``paperfetch config``, the CLI's help and ``r.settings`` are made
from it. Every transport knob is a setting by declaration: the field's name, ``PAPERFETCH_<NAME>``.
"""

from __future__ import annotations

import html
import textwrap
from dataclasses import Field, dataclass, field, fields, replace
from enum import Enum
from functools import partial
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
from paperfetch.fulltext.pdflines import DEFAULT_ENGINE, PdfEngine
from paperfetch.http.assign import Prefer
from paperfetch.http.config import DEFAULT_HOST_RULES, KNOBS, TransportConfig
from paperfetch.redact import register_secrets

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = [
    "ENDPOINT_NAMES", "ENV_VARS", "HOST_RULE_KNOBS", "OPTION_NAMES", "SETTING_NAMES", "Settings",
    "TRANSPORT_SETTING_NAMES", "load_settings", "options_doc", "refuse_differing", "setting_arguments",
    "setting_flag", "setting_help",
]

#: The services whose base URL can be pointed elsewhere (``endpoints=`` or ``PAPERFETCH_<NAME>_URL``).
ENDPOINT_NAMES: tuple[str, ...] = ("unpaywall", "openalex", "crossref", "europepmc", "ncbi_idconv", "ncbi_eutils", "arxiv",
                                   "doi", "semanticscholar", "biorxiv", "pmc")
#: The transport knobs that spell a host's rule (:class:`~paperfetch.http.config.HostRule`): shown as one row per host.
HOST_RULE_KNOBS = ("host_intervals", "host_concurrency", "host_windows", "host_pools")


def _option(default: Any, kind: type, line: str, *env: str, secret: bool = False,
            choices: tuple[str, ...] = ()) -> Any:
    """A run option: its default, the kind its text is read as, its help line, its environment variables (first
    wins), whether it is a secret (never shown) and the values it may take."""
    return field(default=default, metadata={"kind": kind, "help": line, "env": env, "secret": secret, "choices": choices})


@dataclass(frozen=True)
class Settings:
    """The effective settings (:func:`load_settings`). ``origin`` says where each value came from
    (``"argument"``, ``"env PAPERFETCH_EMAIL"``, ``"file /…/config.toml"``, ``"default"``); a transport knob reads
    through to :attr:`transport`. The ``repr`` masks the secrets; creating one registers them for redaction.
    """

    email: str | None = _option(None, str, "contact e-mail (Unpaywall requires one)", "PAPERFETCH_EMAIL", secret=True)
    openalex_api_key: str | None = _option(None, str, "OpenAlex API key", "PAPERFETCH_OPENALEX_API_KEY", secret=True)
    ncbi_api_key: str | None = _option(None, str, "NCBI E-utilities API key", "PAPERFETCH_NCBI_API_KEY", "NCBI_API_KEY",
                                       secret=True)
    s2_api_key: str | None = _option(None, str, "Semantic Scholar API key", "PAPERFETCH_S2_API_KEY", secret=True)
    out_dir: str = _option(defaults.OUT_DIR, str, "output folder (also holds the resume ledger)", "PAPERFETCH_OUT")
    workers: int | None = _option(None, int, "papers in progress at once (none: by the number of hosts)",
                                  "PAPERFETCH_WORKERS")
    #: the host-state store (:func:`paperfetch.state.open_store`); a password in a Redis URL is never shown
    state: str = _option(defaults.STATE, str, "host-state store: 'sqlite' (user cache dir), a path, 'sqlite:///path', "
                         "'redis://host:port/db' or 'memory'", STATE_ENV)
    cache_dir: str | None = _option(None, str, "folder of the metadata cache (none: the user cache dir)",
                                    "PAPERFETCH_CACHE_DIR")
    skip_retracted: bool = _option(False, bool, "a paper a source calls retracted gets status 'retracted', "
                                   "not downloaded", "PAPERFETCH_SKIP_RETRACTED")
    prefer: str = _option(Prefer.VERSION.value, str, "which copies of a paper compete on load: 'version' (those of its "
                          "best version tier), 'speed' (all), 'published' (as 'version', and a preprint's version of "
                          "record where it is open)", "PAPERFETCH_PREFER", choices=tuple(p.value for p in Prefer))
    pdf_engine: str = _option(DEFAULT_ENGINE.value, str, "the library that reads a PDF's text",
                              "PAPERFETCH_PDF_ENGINE", choices=tuple(e.value for e in PdfEngine))
    filename_template: str = _option(defaults.FILENAME_TEMPLATE, str, "a saved PDF's file name (fields {type}, "
                                     "{value}, {key}, {version})", "PAPERFETCH_FILENAME_TEMPLATE")
    max_pdf_bytes: int = _option(defaults.MAX_PDF_BYTES, int, "larger PDFs are refused (0: no limit)",
                                 "PAPERFETCH_MAX_PDF_BYTES")
    resume: bool = _option(True, bool, "the ledger in out_dir answers for what an earlier run finished",
                           "PAPERFETCH_RESUME")
    progress: bool = _option(True, bool, "show progress (the dashboard or a bar)", "PAPERFETCH_PROGRESS")
    dashboard: bool | None = _option(None, bool, "the live dashboard (none: in a Jupyter kernel, a bar elsewhere)",
                                     "PAPERFETCH_DASHBOARD")
    #: base URLs given for services (name → URL); the others use the service's own
    endpoints: Mapping[str, str] = field(default_factory=dict)
    transport: TransportConfig = field(default_factory=lambda: TransportConfig(**_SETTINGS_DEFAULTS))
    origin: Mapping[str, str] = field(default_factory=dict, compare=False)
    config_path: Path | None = field(default=None, compare=False)
    #: the transport knobs that were given (not defaults), as given: what :meth:`with_transport` keeps on top
    given: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        register_secrets([getattr(self, f.name) for f in _OPTIONS if f.metadata["secret"]])

    def __getattr__(self, name: str) -> Any:
        if name in KNOBS:  # one value: the transport's
            return getattr(self.transport, name)
        raise AttributeError(f"{type(self).__name__!r} has no attribute {name!r}")

    def __repr__(self) -> str:
        return f"Settings({', '.join(f'{name}={self.shown(name)}' for name in OPTION_NAMES)}, transport=…)"

    def shown(self, name: str) -> str:
        """The value of setting *name* for people: secrets masked, a URL's password masked, a host's rule in words."""
        if name.startswith("endpoints."):
            return repr(without_userinfo(self.endpoints.get(name.split(".", 1)[1], "")))
        if name.startswith("hosts."):
            return str(self.transport.hosts[name.split(".", 1)[1]])
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
        return Identification(**{f.name: getattr(self, f.name) for f in fields(Identification) if f.name != "tool"})

    def rows(self) -> list[tuple[str, str, str]]:
        """``(name, shown value, origin)`` for every setting a run uses (``paperfetch config``): the run options,
        the base URLs given, the transport's knobs, then one rule per host (``hosts.<host>``)."""
        names = [*OPTION_NAMES, *(f"endpoints.{n}" for n in sorted(self.endpoints)),
                 *(n for n in TRANSPORT_SETTING_NAMES if n not in HOST_RULE_KNOBS),
                 *(f"hosts.{host}" for host in sorted(self.transport.hosts))]
        return [(name, self.shown(name), self._origin_of(name)) for name in names]

    def _origin_of(self, name: str) -> str:
        """Where setting *name* came from; a host's rule: where each knob that spells it came from."""
        if not name.startswith("hosts."):
            return self.origin.get(name, "default")
        host = name.split(".", 1)[1]
        doors = [self.origin.get(knob, "default") for knob in HOST_RULE_KNOBS
                 if host in (getattr(self.transport, knob) or {})]
        return "; ".join(dict.fromkeys(doors)) or ("default" if host in DEFAULT_HOST_RULES else "")

    def frame(self) -> pd.DataFrame:
        """:meth:`rows` as a DataFrame (``setting``, ``value``, ``origin``), secrets masked as there."""
        import pandas as pd

        return pd.DataFrame(self.rows(), columns=["setting", "value", "origin"])

    def _repr_html_(self) -> str:
        """A notebook shows the settings as :meth:`frame`'s table, a host's pools by their labels
        (``hosts.api.crossref.org (list queries)``), each value escaped in ``<code>``: a regular expression's ``$``
        is not maths to MathJax (it skips ``code``, and the table is ``tex2jax_ignore``)."""
        from paperfetch.http.status import shown_hosts

        frame = self.frame()
        hosts = frame["setting"].str.startswith("hosts.")
        frame.loc[hosts, "setting"] = [f"hosts.{h}" for h in shown_hosts((s[6:] for s in frame.loc[hosts, "setting"]),
                                                                          self.transport.pools)]
        frame["value"] = [f"<code>{html.escape(v).replace('$', '&#36;')}</code>" for v in frame["value"]]
        for column in ("setting", "origin"):
            frame[column] = frame[column].map(html.escape)
        return str(frame.to_html(index=False, escape=False, classes="tex2jax_ignore"))

    def replace(self, *, origin: str = "argument", **changes: Any) -> "Settings":
        """These settings with run options *changes* (read as arguments are, checked the same way)."""
        unknown = sorted(set(changes) - set(OPTION_NAMES))
        if unknown:
            raise ConfigurationError(f"{unknown} cannot be changed here; run options: {', '.join(OPTION_NAMES)}")
        values = {name: _convert(_FIELDS[name], value, origin) for name, value in changes.items() if value is not None}
        return replace(self, **values, origin={**self.origin, **dict.fromkeys(values, origin)})

    def with_transport(self, derived: Mapping[str, Any], *, origin: str) -> "Settings":
        """These settings over a transport whose unset knobs come from *derived* (a Retriever's sources); a given
        knob wins, and for a mapping the given entries win key by key."""
        values = {**_SETTINGS_DEFAULTS, **derived}
        origins = {**self.origin, **{name: origin for name in derived if name in TRANSPORT_SETTING_NAMES
                                     and name not in self.given}}
        for name, value in self.given.items():
            if isinstance(value, Mapping) and isinstance(derived.get(name), Mapping):
                values[name] = {**derived[name], **value}
                origins[name] = f"{self.origin.get(name, 'argument')} over {origin}"
            else:
                values[name] = value
        return replace(self, transport=_transport(values, origins), origin=origins)

    def with_client(self, config: TransportConfig) -> "Settings":
        """These settings with a caller's client's transport, every knob's origin ``"http= client"``."""
        origins = {**self.origin, **{name: "http= client" for name in TRANSPORT_SETTING_NAMES}}
        return replace(self, transport=config, origin=origins, given={})


#: The run options: the fields of :class:`Settings` that declare how they are read.
_OPTIONS: tuple[Field, ...] = tuple(f for f in fields(Settings) if "kind" in f.metadata)
_FIELDS: Mapping[str, Field] = {f.name: f for f in _OPTIONS}
OPTION_NAMES: tuple[str, ...] = tuple(_FIELDS)
_SECRETS = frozenset(f.name for f in _OPTIONS if f.metadata["secret"])
#: Knobs the Retriever derives rather than reads: the contact e-mail is the ``email`` setting.
_DERIVED_KNOBS = frozenset({"contact_email"})
#: The transport knobs that are settings, in the order of :class:`TransportConfig`'s fields.
TRANSPORT_SETTING_NAMES: tuple[str, ...] = tuple(f.name for f in fields(TransportConfig)
                                                 if f.init and f.name not in _DERIVED_KNOBS)
SETTING_NAMES: tuple[str, ...] = OPTION_NAMES + TRANSPORT_SETTING_NAMES
#: Short variable names read before the ``PAPERFETCH_<KNOB>`` form.
_ENV_ALIASES: Mapping[str, tuple[str, ...]] = {"delay_min_s": ("PAPERFETCH_DELAY_MIN",), "delay_max_s": ("PAPERFETCH_DELAY_MAX",)}
#: Where the settings' defaults differ from a bare client's: a Retriever reads robots.txt for web pages.
_SETTINGS_DEFAULTS: Mapping[str, Any] = {"respect_robots_txt": defaults.RESPECT_ROBOTS_TXT}


def setting_help(name: str) -> str:
    """Run option *name*'s help line with its environment variables, for the CLI's ``--help``."""
    meta = _FIELDS[name].metadata
    return f"{meta['help']} (env {' or '.join(meta['env'])}{'; never printed' if meta['secret'] else ''})"


def setting_flag(name: str) -> dict[str, Any]:
    """argparse's keywords for run option *name*'s flag: its help line, its kind or choices; a yes/no is a switch."""
    meta = _FIELDS[name].metadata
    if meta["kind"] is bool:
        return {"action": "store_true", "default": None, "help": setting_help(name)}
    return {"type": meta["kind"], "choices": meta["choices"] or None, "help": setting_help(name)}


def options_doc(*names: str) -> str:
    """The numpydoc ``Parameters`` entries of run options *names*, made from their help lines (a docstring's)."""
    entries = []
    for name in names:
        meta = _FIELDS[name].metadata
        kind = "{" + ", ".join(map(repr, meta["choices"])) + "}" if meta["choices"] else meta["kind"].__name__
        text = f"{setting_help(name)}; default {_FIELDS[name].default!r}."
        entries.append(f"    {name} : {kind}, optional\n" + textwrap.fill(text, 116, initial_indent=" " * 8,
                                                                            subsequent_indent=" " * 8))
    return "\n".join(entries)


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


#: How a knob's text is read, by the start of its annotation (a choice of an enum or text: ``… | str``).
_TEXT_READERS: tuple[tuple[str, Callable[[str], Any]], ...] = (
    ("bool", _parse_bool), ("int", int), ("float | tuple", _parse_timeout), ("float", float), ("str", str))


def _knob_parser(name: str) -> Callable[[str], Any] | None:
    """How a knob's text (an environment variable) becomes its value; None: not settable from text (mappings
    and collections: an argument or the config file only)."""
    annotation = str(next(f.type for f in fields(TransportConfig) if f.name == name))
    if annotation.endswith("| str"):
        return str
    return next((read for start, read in _TEXT_READERS if annotation.startswith(start)), None)


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


def _convert(spec: Field, value: Any, where: str) -> Any:
    """Run option *spec*'s value from *where*, read as its kind and checked; None: empty text (not given)."""
    name, kind = spec.name, spec.metadata["kind"]
    if kind is str:
        if not isinstance(value, str):
            raise ConfigurationError(f"{name} from {where} must be text, not {type(value).__name__}")
        try:
            text = clean_setting(name, value)
        except ConfigurationError as exc:
            raise ConfigurationError(f"{exc} (from {where})") from None
        return _checked(spec, text, where)
    if kind is bool:
        try:
            return value if isinstance(value, bool) else _parse_bool(str(value))
        except ValueError:
            raise ConfigurationError(f"{name} from {where} must be true or false, not {value!r}") from None
    try:
        if isinstance(value, bool):
            raise ValueError
        return kind(value)
    except (TypeError, ValueError):
        shown = mask(value) if name in _SECRETS else repr(value)
        raise ConfigurationError(f"{name} from {where} must be a number ({kind.__name__}), not {shown}") from None


def _checked(spec: Field, text: str | None, where: str) -> str | None:
    """*text* of a text option, if it is one of the option's choices (and, a file name template, one that works)."""
    choices = spec.metadata["choices"]
    if text is not None and choices:
        text = text.lower()
        if text not in choices:
            raise ConfigurationError(f"{spec.name}={text!r} from {where}; choose from {', '.join(choices)}")
    if text is not None and spec.name == "filename_template":  # a template that cannot name a file fails here
        from paperfetch.ids import filename_for, parse_identifier

        filename_for(parse_identifier("10.1000/template-check"), text)
    return text


def _convert_knob(name: str, value: Any, where: str) -> Any:
    """A transport knob's value from *where*: text (the environment) parsed by the field's type; a TOML
    or Python value as it is (the config validates it)."""
    if not isinstance(value, str):
        return tuple(value) if isinstance(value, list) and name == "timeout" else value
    text = clean_setting(name, value)
    parser = _knob_parser(name)
    if parser is None or text is None or where == "argument":
        return text
    try:
        return parser(text)
    except ValueError:
        kind = getattr(parser, "__name__", "value").lstrip("_").replace("parse_", "")
        raise ConfigurationError(f"{name} from {where} must be a {kind}, not {text!r}") from None


def _convert_endpoint(name: str, url: Any, where: str) -> str:
    return clean_setting(f"endpoints[{name!r}]", url) or ""


#: How each run option, transport knob and base URL is read: its variables and its converter.
_OPTION_READERS = {f.name: (f.metadata["env"], partial(_convert, f)) for f in _OPTIONS}
_KNOB_READERS = {name: (_knob_env(name) if _knob_parser(name) is not None else (), partial(_convert_knob, name))
                 for name in TRANSPORT_SETTING_NAMES}
_ENDPOINT_READERS = {f"endpoints.{name}": ((endpoint_env_var(name),), partial(_convert_endpoint, name))
                     for name in ENDPOINT_NAMES}
#: environment variable → the setting it gives, for every setting read from the environment
ENV_VARS: Mapping[str, str] = {env: name for readers in (_OPTION_READERS, _KNOB_READERS, _ENDPOINT_READERS)
                               for name, (variables, _) in readers.items() for env in variables}


@dataclass(frozen=True)
class _Doors:
    """The places a setting can come from, in order: arguments, the environment, the config file."""

    arguments: Mapping[str, Any]
    environ: Mapping[str, str]
    path: Path
    from_file: Mapping[str, Any]

    def given(self, readers: Mapping[str, tuple[tuple[str, ...], Callable[[Any, str], Any]]],
              origin: dict[str, str]) -> dict[str, Any]:
        """The settings given, each ``name: (its variables, its converter)`` of *readers*, converted from the
        first door that has it (None: not given); *origin* gets where each setting came from."""
        values: dict[str, Any] = {}
        for name, (env, convert) in readers.items():
            variable = next((e for e in env if self.environ.get(e, "").strip()), None)
            if name in self.arguments:
                value, where = self.arguments[name], "argument"
            elif variable is not None:
                value, where = self.environ[variable], f"env {variable}"
            elif name in self.from_file:
                value, where = self.from_file[name], f"file {self.path}"
            else:
                value, where = None, "default"
            converted = convert(value, where) if where != "default" else None
            origin[name] = "default" if converted is None else where
            if converted is not None:
                values[name] = converted
        return values


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
    from_file = read_toml_table(path)
    unknown = sorted(set(from_file) - set(SETTING_NAMES))
    if unknown:
        raise ConfigurationError(f"unknown setting(s) {unknown} in {path}; known: {', '.join(SETTING_NAMES)}")
    doors = _Doors(arguments, environ, path, from_file)
    origin: dict[str, str] = {}
    values = doors.given(_OPTION_READERS, origin)
    given = doors.given(_KNOB_READERS, origin)
    # a base URL is given by argument or PAPERFETCH_<NAME>_URL, never by the file
    urls = _Doors({f"endpoints.{k}": v for k, v in (endpoints or {}).items() if v}, environ, path, {})
    where: dict[str, str] = {}
    chosen = {name.split(".", 1)[1]: url for name, url in urls.given(_ENDPOINT_READERS, where).items()}
    origin.update((name, door) for name, door in where.items() if door != "default")  # only those given
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
