"""The item flow: decide first (:func:`next_step`, pure), then act (:func:`act`), one paper at a time; one
:class:`BatchRun` runs a batch of them through the scheduler, the ledger and the dashboard."""

from paperfetch.flow.act import Means, WriteStop, act
from paperfetch.flow.batch import BatchRun, RunSettings
from paperfetch.flow.decide import Outlook, Stage, Step, next_step, stage_of
from paperfetch.flow.job import PaperJob
from paperfetch.flow.rows import IDENTIFIER_COLUMNS, identifier_columns, row_identifiers, why_frame

__all__ = ["BatchRun", "IDENTIFIER_COLUMNS", "Means", "Outlook", "PaperJob", "RunSettings", "Stage", "Step", "WriteStop",
           "act", "identifier_columns", "next_step", "row_identifiers", "stage_of", "why_frame"]
