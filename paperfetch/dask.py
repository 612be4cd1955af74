"""Batches on a ``dask.distributed`` cluster: a Dask DataFrame of identifiers in, one of outcomes out.

>>> from dask.distributed import Client                              # doctest: +SKIP
>>> import dask.dataframe as dd, paperfetch.dask                     # doctest: +SKIP
>>> client = Client("tcp://scheduler:8786")                          # doctest: +SKIP
>>> ids = dd.read_csv("dois-*.csv")                                  # doctest: +SKIP
>>> outcomes = paperfetch.dask.download_frame(ids, "doi", out_dir="/shared/PDFs",
...                                           state="redis://redis-host:6379/0", email="your.name@your-university.edu")
>>> outcomes.to_parquet("/shared/outcomes")                          # doctest: +SKIP

With a Redis *state* every worker shares the ledger and the host state; ``out_dir`` must be shared
storage (docs/state.md, "Dask").
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from paperfetch import defaults
from paperfetch.cells import is_missing
from paperfetch.errors import ConfigurationError, StoreUnavailable
from paperfetch.flow.rows import resumed_row
from paperfetch.ids import IdType, ParsedInput, parse_many
from paperfetch.ledger import ResumeLedger, open_ledger
from paperfetch.outcomes import COLUMNS, outcomes_frame
from paperfetch.paper import ledger_entry

__all__ = ["download_frame", "download_partition"]

logger = logging.getLogger("paperfetch.dask")


def _is_redis(state: Any) -> bool:
    return isinstance(state, str) and state.lower().startswith(("redis://", "rediss://", "unix://"))


def _clean(value: Any) -> Any:
    """A frame cell as a plain Python value (None for NA)."""
    if is_missing(value):
        return None
    return value.item() if hasattr(value, "item") else value


def download_partition(
    inputs: pd.Series,
    *,
    out_dir: str | os.PathLike[str],
    state: str | None = None,
    ledger_name: str = defaults.LEDGER_NAME,
    fallback: str = "local",
    options: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """One partition's outcomes frame, indexed like *inputs*: what each Dask task runs (a Series works too)."""
    out_dir = Path(out_dir).expanduser().resolve()
    values = [_clean(value) for value in inputs]  # pyarrow strings hold <NA> where the caller had None
    parsed = parse_many(values)
    shared = _SharedLedger(state, out_dir, ledger_name, fallback)
    try:
        rows = shared.resumed(parsed)
        todo = [item for item in parsed if item.position not in rows and item.duplicate_of not in rows]
        if todo:
            fresh = _download([item.input for item in todo], out_dir, state, fallback, options)
            for item, record in zip(todo, fresh.to_dict("records")):
                row = {column: _clean(record[column]) for column in COLUMNS}
                row["input"] = item.input
                rows[item.position] = row
                shared.record(item, row)
        for item in parsed:  # a duplicate of a resumed row shares it
            if item.position not in rows:
                assert item.duplicate_of is not None  # every other input got its row above
                rows[item.position] = {**rows[item.duplicate_of], "input": item.input}
    finally:
        shared.close()
    frame = outcomes_frame(rows[item.position] for item in parsed)
    frame.index = inputs.index
    return frame


class _SharedLedger:
    """A partition's view of the shared Redis ledger (none for another *state*). Without Redis, the partition
    goes on with the Retriever's SQLite ledger in out_dir, or fails if *fallback* is ``"error"``."""

    def __init__(self, state: str | None, out_dir: Path, name: str, fallback: str) -> None:
        self.out_dir = out_dir
        self.fallback = fallback
        self.ledger: ResumeLedger | None = open_ledger(state, folder=out_dir, name=name) if _is_redis(state) else None

    def resumed(self, parsed: list[ParsedInput]) -> dict[int, dict[str, Any]]:
        """The rows, by input position, the shared ledger answers without a request (done, or called absent)."""
        rows: dict[int, dict[str, Any]] = {}
        if self.ledger is None:
            return rows
        try:
            for item in parsed:
                ident = item.identifier
                if ident is None or item.duplicate_of is not None:
                    continue
                resumed = resumed_row(self.ledger, ident, self.out_dir)
                if resumed is not None:
                    if ident.type is IdType.ARXIV:
                        resumed["doi"] = resumed.get("doi") or ident.doi
                    rows[item.position] = {"input": item.input, **resumed}
        except StoreUnavailable as exc:
            self._lost(exc)
        return rows

    def record(self, item: ParsedInput, row: Mapping[str, Any]) -> None:
        """Record a fresh row of a first-seen identifier in the shared ledger."""
        if self.ledger is None or item.identifier is None or item.duplicate_of is not None:
            return
        try:  # what the Retriever's own ledger keeps of a row
            self.ledger.record(**ledger_entry(item.identifier.key, row))
        except StoreUnavailable as exc:
            self._lost(exc)

    def _lost(self, exc: StoreUnavailable) -> None:
        if self.fallback == "error":
            raise exc
        logger.warning("%s; this partition goes on with the local ledger in %s", exc, self.out_dir)
        self.close()

    def close(self) -> None:
        if self.ledger is not None:
            self.ledger.close()
        self.ledger = None


def _download(inputs: list[object], out_dir: Path, state: str | None, fallback: str,
              options: Mapping[str, Any] | None) -> pd.DataFrame:
    """The outcomes of *inputs* from a Retriever of this worker; the SQLite ledger in out_dir records every
    finished row, so it survives a Redis outage."""
    from paperfetch.retriever import Retriever

    kwargs = dict(options or {})
    kwargs.setdefault("progress", False)
    kwargs.setdefault("dashboard", False)
    if state is not None:
        kwargs["state"] = state  # the shared host state: every worker paces through the same store
        if _is_redis(state) and fallback == "local":
            kwargs.setdefault("state_fallback", "local")  # Redis lost: this machine's state, rows keep coming
    with Retriever(out_dir=out_dir, **kwargs) as retriever:
        return retriever.download(inputs)


def download_frame(
    frame: Any,
    column: str | None = "doi",
    *,
    out_dir: str | os.PathLike[str],
    state: str | None = None,
    ledger_name: str = defaults.LEDGER_NAME,
    fallback: str = "local",
    **retriever_options: Any,
) -> Any:
    """One outcomes row per identifier, over the current client's Dask cluster: a lazy Dask DataFrame indexed
    like *frame* (a Dask DataFrame with *column*, or a Series). *state* names the shared store (the ledger
    moves there); *fallback* ``"local"`` goes on with local ledgers without Redis, ``"error"`` fails the task
    with StoreUnavailable. Other keyword arguments go to each worker's Retriever and must pickle."""
    try:
        import dask.dataframe as dd
    except ImportError:  # pragma: no cover
        raise ConfigurationError('paperfetch.dask needs dask: pip install "paperfetch-oa[dask]"') from None
    if fallback not in ("local", "error"):
        raise ConfigurationError(f"fallback must be 'local' or 'error', not {fallback!r}")
    if state is not None and not _is_redis(state):
        raise ConfigurationError(
            f"workers on several machines share only a Redis store; state must be 'redis://host:port/db', not {state!r}"
        )
    if isinstance(frame, dd.DataFrame):
        if column not in frame.columns:
            raise ConfigurationError(f"no column {column!r} in the frame; it has {list(frame.columns)}")
        series = frame[column]
    elif isinstance(frame, dd.Series):
        series = frame
    else:
        raise ConfigurationError(f"download_frame takes a Dask DataFrame or Series, not {type(frame).__name__}; "
                                 "for pandas use Retriever.download_frame")
    return series.map_partitions(
        download_partition, out_dir=str(Path(out_dir).expanduser().resolve()), state=state, ledger_name=ledger_name,
        fallback=fallback, options=dict(retriever_options), meta=outcomes_frame([]),  # the outcomes schema
    )


