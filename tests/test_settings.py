"""Settings: arguments > environment > TOML file in the user config folder > defaults."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from paperfetch import ConfigurationError, HostRegistry, HttpClient, Retriever, Settings, load_settings
from paperfetch.config import clean_setting, default_config_path
from paperfetch.http.identity import user_agent
from paperfetch.settings import HOST_RULE_KNOBS, SETTING_NAMES, TRANSPORT_SETTING_NAMES
from paperfetch.testing import Reply


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


def test_precedence_argument_environment_file_default(tmp_path):
    path = write(tmp_path, 'email = "file@uni.example"\nout_dir = "from-file"\nworkers = 3\nmax_retries = 5\n')
    env = {"PAPERFETCH_OUT": "from-env", "PAPERFETCH_WORKERS": "7"}
    s = load_settings({"workers": 9, "email": None}, environ=env, config_path=path)
    assert (s.workers, s.out_dir, s.email, s.max_retries, s.delay_min_s) == (9, "from-env", "file@uni.example", 5, None)
    assert set(s.origin) == set(SETTING_NAMES)  # every setting, the transport's included, says where it came from
    assert {name: where for name, where in s.origin.items() if where != "default"} == {
        "email": f"file {path}", "out_dir": "env PAPERFETCH_OUT", "workers": "argument", "max_retries": f"file {path}",
    }
    assert s.state == "sqlite"


def test_state_comes_from_paperfetch_state_and_a_redis_password_is_never_shown(tmp_path):
    s = load_settings({}, environ={"PAPERFETCH_STATE": "redis://:hunter2@127.0.0.1:6390/0"}, config_path=tmp_path / "none.toml")
    assert s.origin["state"] == "env PAPERFETCH_STATE"
    assert s.state == "redis://:hunter2@127.0.0.1:6390/0"
    assert "hunter2" not in repr(s) and "hunter2" not in s.shown("state")
    assert load_settings({"state": "memory"}, environ={"PAPERFETCH_STATE": "sqlite"}, config_path=tmp_path / "none.toml").state == "memory"


def test_ncbi_key_from_either_variable_paperfetch_first(tmp_path):
    missing = tmp_path / "none.toml"
    assert load_settings(environ={"NCBI_API_KEY": "k-ncbi-1"}, config_path=missing).ncbi_api_key == "k-ncbi-1"
    both = {"NCBI_API_KEY": "k-ncbi-1", "PAPERFETCH_NCBI_API_KEY": "k-pf-2"}
    s = load_settings(environ=both, config_path=missing)
    assert s.ncbi_api_key == "k-pf-2" and s.origin["ncbi_api_key"] == "env PAPERFETCH_NCBI_API_KEY"


def test_a_paperfetch_table_is_read_too(tmp_path):
    path = write(tmp_path, '[paperfetch]\nopenalex_api_key = "oa-key-1234"\ndelay_min_s = 2\n')
    s = load_settings(environ={}, config_path=path)
    assert s.openalex_api_key == "oa-key-1234" and s.delay_min_s == 2.0


@pytest.mark.parametrize("text, message", [
    ('emial = "x@y.org"\n', "unknown setting(s) ['emial']"),
    ('workers = "many"\n', "workers from file"),
    ("email = [\n", "cannot read the config file"),
    ("workers = true\n", "must be a number"),
])
def test_bad_files_name_the_problem(tmp_path, text, message):
    with pytest.raises(ConfigurationError, match=None) as info:
        load_settings(environ={}, config_path=write(tmp_path, text))
    assert message in str(info.value)


def test_bad_environment_value_names_the_variable(tmp_path):
    with pytest.raises(ConfigurationError) as info:
        load_settings(environ={"PAPERFETCH_DELAY_MIN": "soon"}, config_path=tmp_path / "none.toml")
    assert "env PAPERFETCH_DELAY_MIN" in str(info.value)


def test_frozen_masked_and_blank_means_unset(tmp_path):
    s = load_settings({"email": "   "}, environ={"PAPERFETCH_EMAIL": ""}, config_path=tmp_path / "none.toml")
    assert s.email is None and s.origin["email"] == "default"
    s = load_settings({"email": "me@uni.example"}, environ={}, config_path=tmp_path / "none.toml")
    with pytest.raises(AttributeError):
        s.email = "x"  # type: ignore[misc]
    assert "me@uni.example" not in repr(s) and "email='***'" in repr(s)
    assert s.identification.email == "me@uni.example"
    assert Settings().max_retries == 3


def test_default_path_is_in_the_user_config_folder(monkeypatch, tmp_path):
    monkeypatch.delenv("PAPERFETCH_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert default_config_path() == tmp_path / "xdg" / "paperfetch" / "config.toml"
    monkeypatch.setenv("PAPERFETCH_CONFIG", str(tmp_path / "other.toml"))
    assert default_config_path() == tmp_path / "other.toml"


def test_user_agent_names_the_project_and_the_contact():
    from paperfetch import __version__

    assert user_agent(None) == f"paperfetch/{__version__} (+https://github.com/paperfetch/paperfetch)"
    assert user_agent("me@uni.example").endswith("; mailto:me@uni.example)")


def test_the_environment_readers(monkeypatch, tmp_path):
    from paperfetch.config import env_cache_dir, env_state

    assert env_state({}) == "sqlite" and env_state({"PAPERFETCH_STATE": ""}) == "sqlite"
    assert env_state({"PAPERFETCH_STATE": "memory"}) == "memory"
    none = tmp_path / "none.toml"  # a service's base URL is a setting: PAPERFETCH_<NAME>_URL, blank when unset
    assert load_settings(environ={"PAPERFETCH_DOI_URL": ""}, config_path=none).endpoints == {}
    endpoints = load_settings(environ={"PAPERFETCH_DOI_URL": "http://127.0.0.1:9"}, config_path=none).endpoints
    assert endpoints == {"doi": "http://127.0.0.1:9"}
    assert env_cache_dir({}) is None
    assert env_cache_dir({"PAPERFETCH_CACHE_DIR": "~/c"}) == Path("~/c").expanduser()
    monkeypatch.setenv("PAPERFETCH_STATE", "redis://127.0.0.1:1/0")  # without a mapping: os.environ, when asked
    monkeypatch.setenv("PAPERFETCH_CROSSREF_URL", "http://127.0.0.1:8")
    monkeypatch.setenv("PAPERFETCH_CACHE_DIR", str(tmp_path))
    assert env_state() == "redis://127.0.0.1:1/0" and load_settings(config_path=none).endpoints["crossref"] == "http://127.0.0.1:8"
    assert env_cache_dir() == tmp_path


def test_config_is_the_one_reader_of_the_environment():
    import re

    import paperfetch

    package = Path(paperfetch.__file__).parent
    readers = {path.relative_to(package).as_posix() for path in package.rglob("*.py")
               if re.search(r"os\.environ|os\.getenv", path.read_text(encoding="utf-8"))}
    assert readers == {"config.py"}


# ---------------------------------------------------------------------------- control characters

CONTROL = st.sampled_from([*map(chr, range(0x00, 0x20)), "\x7f", "\x85", "\u2028", "\u2029"])
PLAIN = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=20)
SECRETS = ("email", "openalex_api_key", "ncbi_api_key")
TEXT_SETTINGS = (*SECRETS, "out_dir", "state")


@pytest.fixture
def own_redactor(monkeypatch):
    """The settings reader registers every secret it reads with the process's redactor, which only grows:
    generated values ("null", ", \"") would then be masked in every later test's output (cassette bodies)."""
    from paperfetch import redact

    monkeypatch.setattr(redact, "REDACTOR", redact.Redactor())


@hypothesis_settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(TEXT_SETTINGS), before=PLAIN, control=CONTROL, after=PLAIN)
def test_a_control_character_in_any_setting_is_refused_naming_it_never_showing_a_secret(tmp_path, own_redactor, name,
                                                                                           before, control, after):
    value = f"{before}{control}{after}"
    with pytest.raises(ConfigurationError) as caught:
        clean_setting(name, value)
    assert name in str(caught.value) and f"U+{ord(control):04X}" in str(caught.value)
    if name in SECRETS:
        assert value not in str(caught.value) and "(value not shown)" in str(caught.value)
    # the settings reader (CLI, config file, environment) refuses it the same way
    with pytest.raises(ConfigurationError, match=name):
        load_settings({name: value}, environ={}, config_path=tmp_path / "none.toml")


@hypothesis_settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(TEXT_SETTINGS), value=PLAIN, space=st.sampled_from([" ", "\n", "\r\n", "\t", " \n "]))
def test_surrounding_whitespace_of_any_setting_is_stripped(tmp_path, own_redactor, name, value, space):
    assert clean_setting(name, f"{space}{value}{space}") == value
    loaded = load_settings({name: f"{value}{space}"}, environ={}, config_path=tmp_path / "none.toml")
    assert getattr(loaded, name) == value


@hypothesis_settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(field=st.sampled_from(SECRETS), before=PLAIN, control=CONTROL)
def test_the_retriever_refuses_a_secret_with_a_control_character_without_showing_it(own_redactor, field, before, control):
    from paperfetch import Retriever

    secret = f"{before}{control}X-Injected: 1"
    with pytest.raises(ConfigurationError) as caught:
        Retriever(**{field: secret}, state="memory", cache=False, progress=False)
    assert field in str(caught.value) and secret not in str(caught.value)


@pytest.mark.parametrize("kwargs, named", [
    ({"out_dir": "PDFs\n/x"}, "out_dir"),
    ({"endpoints": {"unpaywall": "http://127.0.0.1:1\r\nX-Injected: 1"}}, "endpoints['unpaywall']"),
    ({"state": "redis://:hunter2@127.0.0.1:1/0\r\n0"}, "state"),
])
def test_the_retriever_refuses_other_settings_with_control_characters(kwargs, named):
    from paperfetch import Retriever

    with pytest.raises(ConfigurationError) as caught:
        Retriever(**kwargs, cache=False, progress=False)
    assert named in str(caught.value) and "hunter2" not in str(caught.value)


def test_an_email_with_its_trailing_newline_gives_a_row_per_input_within_seconds(tmp_path):

    from paperfetch import Retriever
    from paperfetch.demo import DemoWorld

    with DemoWorld(base_ip=96) as world:
        with Retriever(email="me@uni.edu\n", out_dir=tmp_path / "out",
                       endpoints=world.endpoints, state="memory", progress=False, verbosity=0,
                       http_options={"network_retry_base_s": 0.05, "rate_limit_min_s": 0.05, "rate_limit_max_s": 0.1}) as r:
            assert r.identification.email == "me@uni.edu"
            frame = r.download(["10.5555/demo.fast", "10.5555/demo.unknown"])
    assert list(frame["status"].astype(str)) == ["downloaded", "not_found"]


# ---------------------------------------------------------------------------- one path for every setting
def _recording(seen: list):
    def answer(request):
        seen.append(request.headers.get("User-Agent", ""))
        return Reply(404, b"no")
    return answer


def _one_request(retriever, server) -> None:
    response = retriever.web.get(server.url("/paper.pdf"))
    assert response is not None and response.status_code == 404


@pytest.mark.parametrize("door", ["argument", "environment", "config file", "http= client"])
def test_a_transport_setting_from_each_door_shapes_the_request(door, tmp_path, monkeypatch, hosts):
    seen: list[str] = []
    server = hosts("127.0.0.181", {"*": _recording(seen)})
    wanted = f"paperfetch-door-test/{door.split()[0]}"
    kwargs: dict = {"out_dir": tmp_path / "pdfs", "progress": False, "cache": False, "state": "memory",
                    "sources": ["arxiv"]}
    if door == "argument":
        kwargs["http_options"] = {"user_agent": wanted}
    elif door == "environment":
        monkeypatch.setenv("PAPERFETCH_USER_AGENT", wanted)
    elif door == "config file":
        kwargs["config"] = write(tmp_path, f'user_agent = "{wanted}"\n')
    else:
        kwargs = {k: v for k, v in kwargs.items() if k != "state"}
        kwargs["http"] = HttpClient(user_agent=wanted, registry=HostRegistry())
    with Retriever(**kwargs) as r:
        _one_request(r, server)
        expected_origin = {"argument": "argument", "environment": "env PAPERFETCH_USER_AGENT",
                           "config file": f"file {tmp_path / 'config.toml'}", "http= client": "http= client"}[door]
        assert (r.web.user_agent, r.settings.origin["user_agent"]) == (wanted, expected_origin)
        assert dict((name, (value, origin)) for name, value, origin in r.settings.rows())["user_agent"] == (
            repr(wanted), expected_origin)
    assert set(seen) == {wanted} and server.hits() >= 1  # robots.txt and the PDF request alike


def test_an_argument_beats_the_environment_which_beats_the_file(tmp_path, monkeypatch, hosts):
    server = hosts("127.0.0.182", {"*": Reply(503, b"busy", headers={"Retry-After": "0"})})
    path = write(tmp_path, "max_retries = 4\nbackoff_base_s = 0.01\nbackoff_max_s = 0.02\n")
    monkeypatch.setenv("PAPERFETCH_MAX_RETRIES", "2")
    common = {"out_dir": tmp_path / "pdfs", "progress": False, "cache": False, "state": "memory", "sources": ["arxiv"],
              "respect_robots_txt": False, "config": path}
    with Retriever(**common) as r:
        assert r.settings.origin["max_retries"] == "env PAPERFETCH_MAX_RETRIES"
        assert r.settings.origin["backoff_base_s"] == f"file {path}"
        r.web.get(server.url("/a"))
    assert server.hits("/a") == 3  # the first try and the environment's 2 retries
    with Retriever(**common, max_retries=1) as r:
        r.web.get(server.url("/b"))
    assert server.hits("/b") == 2


def test_settings_rows_are_what_the_clients_run_on(tmp_path):
    with Retriever(out_dir=tmp_path, progress=False, cache=False, state="memory", delay_min_s=0.5, delay_max_s=0.7,
                   http_options={"max_crawl_delay_s": 12}) as r:
        assert r.web.config is r.settings.transport
        rows = {name: value for name, value, _ in r.settings.rows()}
        for name in TRANSPORT_SETTING_NAMES:
            if name not in HOST_RULE_KNOBS:  # the spellings of a host's rule: one row per host instead
                assert rows[name] == r.settings.shown(name)
            assert getattr(r.settings, name) == getattr(r.web.config, name), name
            if name != "respect_robots_txt":  # the API client differs in this one knob: APIs are not crawled
                assert getattr(r.api.config, name) == getattr(r.web.config, name), name
        assert (r.web.respect_robots_txt, r.api.respect_robots_txt) == (True, False)
        assert (rows["delay_min_s"], rows["delay_max_s"], rows["max_crawl_delay_s"]) == ("0.5", "0.7", "12.0")
        host_intervals = r.web.host_intervals
        assert r.settings.origin["host_intervals"] == "the sources" and host_intervals["api.openalex.org"] == 0.1
        origins = {name: origin for name, _, origin in r.settings.rows()}
        assert rows["hosts.api.openalex.org"] == "1 request per 0.1 s" and origins["hosts.api.openalex.org"] == "the sources"
        assert rows["hosts.arxiv.org"] == "1 request per 3 s"  # every client's default rule for arXiv
        assert not any("Window(" in value for value in rows.values())  # a host's rule in plain words


def test_a_client_and_a_differing_transport_argument_are_refused_by_name(tmp_path):
    client = HttpClient(registry=HostRegistry())
    with pytest.raises(ConfigurationError, match=r"max_retries=4 \(the client has 3\)"):
        Retriever(http=client, max_retries=client.config.max_retries + 1, out_dir=tmp_path)
    with pytest.raises(ConfigurationError, match="timeout"):
        Retriever(http=client, http_options={"timeout": 5}, out_dir=tmp_path)
    with Retriever(http=client, max_retries=3, timeout=client.config.timeout, out_dir=tmp_path, cache=False,
                   progress=False) as r:  # the same values are no conflict
        assert r.settings.origin["max_retries"] == "http= client"


def test_http_options_are_transport_settings_given_once(tmp_path):
    with pytest.raises(ConfigurationError, match="'registry' is not a transport setting"):
        Retriever(out_dir=tmp_path, http_options={"registry": HostRegistry()})
    with pytest.raises(ConfigurationError, match="max_retries given twice"):
        Retriever(out_dir=tmp_path, max_retries=2, http_options={"max_retries": 5})


def test_transport_settings_from_text_are_parsed_by_their_type_and_refused_by_source(tmp_path):
    missing = tmp_path / "none.toml"
    s = load_settings(environ={"PAPERFETCH_POLITE_MODE": "off", "PAPERFETCH_TIMEOUT": "5, 20",
                               "PAPERFETCH_ROBOTS_UNREACHABLE": "disallow", "PAPERFETCH_DELAY_MIN_S": "1.5"}, config_path=missing)
    assert (s.polite_mode, s.timeout, s.robots_unreachable.value, s.delay_min_s) == (False, (5.0, 20.0), "disallow", 1.5)
    with pytest.raises(ConfigurationError, match="polite_mode from env PAPERFETCH_POLITE_MODE must be a bool"):
        load_settings(environ={"PAPERFETCH_POLITE_MODE": "maybe"}, config_path=missing)
    with pytest.raises(ConfigurationError, match=r"max_retries must be >= 0.*max_retries from env PAPERFETCH_MAX_RETRIES"):
        load_settings(environ={"PAPERFETCH_MAX_RETRIES": "-1"}, config_path=missing)
    path = write(tmp_path, '[paperfetch]\nhost_intervals = { "api.example.org" = 2 }\ntimeout = [3, 9]\n')
    s = load_settings(environ={}, config_path=path)
    assert s.host_intervals["api.example.org"] == 2.0 and s.timeout == (3.0, 9.0)


def test_paperfetch_config_lists_the_transport_settings_with_their_origins(tmp_path, monkeypatch, capsys):
    from paperfetch.cli import main

    path = write(tmp_path, "delay_min_s = 2\n")
    monkeypatch.setenv("PAPERFETCH_MAX_RETRIES", "7")
    assert main(["config", "--config", str(path)]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines() if line.startswith("  ")}
    assert lines["max_retries"].split()[1:] == ["7", "env", "PAPERFETCH_MAX_RETRIES"]
    assert lines["delay_min_s"].split()[1:] == ["2.0", "file", str(path)]
    assert lines["timeout"].split()[-1] == "default" and lines["respect_robots_txt"].split()[1] == "True"
    assert set(TRANSPORT_SETTING_NAMES) - set(HOST_RULE_KNOBS) <= set(lines)
    # one row per host rule, as a run has it: arXiv's interval is its source's
    assert lines["hosts.arxiv.org"].split()[1:] == ["1", "request", "per", "3", "s", "the", "sources"]


def test_each_knob_is_declared_once_and_the_client_keywords_derive_from_it():
    import inspect

    from paperfetch.http.config import KNOBS, POSITIONAL_KNOBS, ConfiguredKnobs

    parameters = inspect.signature(HttpClient).parameters
    assert KNOBS <= set(parameters) and list(parameters)[:len(POSITIONAL_KNOBS)] == list(POSITIONAL_KNOBS)
    assert all(isinstance(vars(ConfiguredKnobs).get(name), object) and name in vars(ConfiguredKnobs) for name in KNOBS)
    client = HttpClient("ua/1", True, 0.2, 0.3, registry=HostRegistry(), max_crawl_delay_s=7)
    assert (client.user_agent, client.respect_robots_txt, client.delay_min_s, client.max_crawl_delay_s) == ("ua/1", True, 0.2, 7.0)
    client.max_retries = 5  # a knob set on the client makes a new config, and the wire runs on it
    assert client.config.max_retries == 5
    with pytest.raises(TypeError, match="unexpected keyword argument 'max_retry'"):
        HttpClient(max_retry=2)


# ---------------------------------------------------------------------- the Retriever reads them like the CLI
def test_paperfetch_email_reaches_a_bare_retriever(monkeypatch, tmp_path):
    monkeypatch.setenv("PAPERFETCH_EMAIL", "env.person@uni.example")
    with Retriever(out_dir=tmp_path, progress=False, cache=False) as r:
        assert r.identification.email == "env.person@uni.example"
        assert "unpaywall" not in r.skipped_sources
        assert r.settings.origin["email"] == "env PAPERFETCH_EMAIL"
        assert "env.person@uni.example" not in repr(r.settings)  # masked


def test_the_config_file_reaches_a_bare_retriever_and_arguments_win(monkeypatch, tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('email = "file.person@uni.example"\nworkers = 3\n', encoding="utf-8")
    monkeypatch.setenv("PAPERFETCH_CONFIG", str(config))
    with Retriever(out_dir=tmp_path, progress=False, cache=False) as r:
        assert r.identification.email == "file.person@uni.example"
        assert r.settings.workers == 3
        assert r.settings.origin["email"] == f"file {config}"
        rows = {name: (shown, origin) for name, shown, origin in r.settings.rows()}
        assert rows["email"] == ("'***'", f"file {config}")
    monkeypatch.setenv("PAPERFETCH_WORKERS", "2")
    with Retriever(out_dir=tmp_path, progress=False, cache=False, workers=5) as r:
        assert r.settings.workers == 5 and r.settings.origin["workers"] == "argument"  # arguments > environment > file


def test_settings_print_as_a_small_table_in_a_notebook(monkeypatch, tmp_path):
    monkeypatch.setenv("PAPERFETCH_WORKERS", "2")
    s = load_settings({"out_dir": "PDFs", "email": "table.person@uni.example"}, environ={"PAPERFETCH_WORKERS": "2"},
                      config_path=tmp_path / "none.toml")
    frame = s.frame()
    assert list(frame.columns) == ["setting", "value", "origin"] and len(frame) == len(s.rows())
    assert [tuple(row) for row in frame.itertuples(index=False)] == s.rows()  # the CLI's rows, as a frame
    by = frame.set_index("setting")
    assert by.loc["workers", "origin"] == "env PAPERFETCH_WORKERS" and by.loc["out_dir", "value"] == "'PDFs'"
    html = s._repr_html_()
    assert html.startswith("<table") and "env PAPERFETCH_WORKERS" in html
    assert "table.person@uni.example" not in html + frame.to_string()  # masked: e-mails never reach an output


@pytest.mark.parametrize("door", ["env", "file", "argument"])
def test_a_placeholder_email_is_refused_naming_where_it_came_from(door, monkeypatch, tmp_path):
    placeholder = "someone@example.com"
    kwargs: dict = {}
    if door == "env":
        monkeypatch.setenv("PAPERFETCH_EMAIL", placeholder)
        where = "PAPERFETCH_EMAIL"
    elif door == "file":
        config = tmp_path / "config.toml"
        config.write_text(f'email = "{placeholder}"\n', encoding="utf-8")
        monkeypatch.setenv("PAPERFETCH_CONFIG", str(config))
        where = f"the config file {config}"
    else:
        kwargs["email"] = placeholder
        where = "Retriever(email=...)"
    with pytest.raises(ConfigurationError) as caught:
        Retriever(out_dir=tmp_path, progress=False, cache=False, **kwargs)
    message = str(caught.value)
    assert f"the contact e-mail from {where} is a placeholder" in message and placeholder not in message


@pytest.mark.parametrize("email", ["REDACTED", "you@example.org", "nobody"])
def test_a_placeholder_or_non_address_email_is_refused_by_the_library_saying_what_to_give(email, tmp_path):
    with pytest.raises(ConfigurationError) as caught:
        Retriever(email=email, out_dir=tmp_path, progress=False, cache=False, state="memory")
    message = str(caught.value)
    assert message.startswith("the contact e-mail from Retriever(email=...) is a placeholder or not an address.")
    assert "a name, '@' and a domain with a dot" in message and "example.org" in message
    Retriever(email="your.name@your-university.edu", out_dir=tmp_path, progress=False, cache=False, state="memory").close()


def test_a_missing_email_is_a_warning_and_a_dashboard_line(tmp_path):
    from paperfetch.demo import DemoWorld

    fast = {"network_retry_base_s": 0.05, "rate_limit_min_s": 0.05, "rate_limit_max_s": 0.1}
    with DemoWorld(base_ip=64) as world:
        with pytest.warns(UserWarning, match="no contact e-mail: unpaywall skipped"):
            r = Retriever(out_dir=tmp_path, endpoints=world.endpoints, progress=False, http_options=fast, state="memory")
        with r:
            r.download(["10.5555/demo.fast"])
            assert "no contact e-mail" in repr(r.dashboard())  # a line of the run's recent events


# ---------------------------------------------------------------------- the Retriever as help() and Tab show it
def _documented(doc: str) -> set[str]:
    """The names a numpydoc ``Parameters`` section lists (``a, b : type`` lists two)."""
    import re

    section = doc.split("Parameters\n", 1)[1] if "Parameters\n" in doc else ""
    heads = re.findall(r"^\s*([A-Za-z_][\w, ]*?)\s*(?::.*)?$", section.split("\n\n    Returns")[0], re.M)
    return {name.strip() for head in heads for name in head.split(",") if name.strip().isidentifier()}


def test_every_argument_of_the_retriever_and_of_its_methods_is_documented():
    import inspect

    wanted = set(inspect.signature(Retriever.__init__).parameters) - {"self"}
    assert wanted - _documented(inspect.getdoc(Retriever) or "") == set()
    for name in [n for n in dir(Retriever) if not n.startswith("_") and callable(getattr(Retriever, n))]:
        method = getattr(Retriever, name)
        params = set(inspect.signature(method).parameters) - {"self"}
        if params:
            assert params - _documented(inspect.getdoc(method) or "") == set(), name
    assert "--explain ID" not in (Retriever.why.__doc__ or "")  # the flag takes no argument


def test_the_retrievers_settings_have_one_home_and_change_through_configure(tmp_path):
    with Retriever(email="tab@uni.example", out_dir=tmp_path, progress=False, cache=False, verbosity=0) as r:
        public = {n for n in dir(r) if not n.startswith("_")}
        assert {"download", "download_frame", "start", "retry", "why", "domain_status", "dashboard", "settings",
                "configure", "out_dir"} <= public
        mirrors = {"workers", "resume", "progress", "show_dashboard", "order", "prefer", "skip_retracted",
                   "filename_template", "max_pdf_bytes", "verbosity"}
        assert not mirrors & public  # no second answer to r.settings
        assert r.out_dir == tmp_path.resolve()
        with pytest.raises(AttributeError):
            r.out_dir = tmp_path / "elsewhere"  # read from the settings, never set beside them
        before = r.settings
        after = r.configure(resume=False, workers=3)
        assert r.settings is after and (after.resume, after.workers) == (False, 3) and before.resume is True
        assert after.origin["workers"] == "configure()" and after.transport is before.transport
        with pytest.raises(ConfigurationError, match="email"):
            r.configure(email="other@uni.example")  # who is asking is a new Retriever's
        with pytest.raises(ConfigurationError, match="prefer"):
            r.configure(prefer="fastest")
