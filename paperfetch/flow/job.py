""":class:`PaperJob`, the scheduler's Job (:class:`paperfetch.http.scheduler.Job`) for one paper."""

from __future__ import annotations

from dataclasses import replace

from paperfetch.flow.act import Means, act
from paperfetch.flow.decide import Outlook, Step, next_step, to_front
from paperfetch.http import context as call_context
from paperfetch.http.context import Tally
from paperfetch.ids import Identifier
from paperfetch.paper import Lookup, Paper

__all__ = ["PaperJob"]


class PaperJob:
    """One paper's way through its sources and copies, one request per :meth:`advance`."""

    def __init__(self, paper: Paper, outlook: Outlook, means: Means) -> None:
        self.outlook = outlook
        self.means = means
        #: what the transport spent for this paper (its waits, its requests), kept by the transport
        self.tally = Tally()
        self.error: BaseException | None = None  #: set by the scheduler when ``advance`` raised
        self.finished = False  #: reported finished by the scheduler (or ended without it)
        self.doing = ""  #: the kind of the step on the wire now ("" between two requests)
        self.paper = paper
        self.step: Step = next_step(paper, outlook)

    def __repr__(self) -> str:
        return f"PaperJob({self.paper.identifier.key}, {self.step.kind})"

    @property
    def identifier(self) -> Identifier:
        return self.paper.identifier

    @property
    def url(self) -> str | None:
        """The next request's URL; None once the paper has ended."""
        return None if self.finished else self.step.url

    @property
    def copies(self) -> tuple[str, ...]:
        """The URLs the next request may use: the best version tier's copies, preferred first; ``()`` otherwise."""
        return () if self.finished else self.step.copies

    @property
    def leads_on(self) -> bool:
        """Whether what this unfinished paper does next may lead to a host no queue holds yet: a lookup or a
        landing page (a doi.org redirect) names the PDF's host only once answered (the ETA's lower bound)."""
        paper = self.step.paper
        if self.finished or paper.ended:
            return False
        if self.doing:
            return self.doing != "download"
        if paper.actions:
            return isinstance(paper.actions[0], Lookup) or paper.actions[0].kind == "landing"
        return bool(paper.sources_left)

    def hold(self, paper: Paper) -> None:
        """Hold *paper* as this job's, and decide its next step."""
        self.paper = paper
        self.step = next_step(paper, self.outlook)

    def choose(self, url: str) -> None:
        """Make the copy at *url* the next request (the scheduler's pick among :attr:`copies`)."""
        index = next((i for i, a in enumerate(self.step.paper.actions) if a.url == url), None)
        if index:
            self.hold(to_front(self.step.paper, index))

    def decide_again(self) -> None:
        """Decide again from the decided paper (its sources already expanded): the holds, the copies' order and
        the batch's write stop as they are now (before each request, and when the host it is queued for is held)."""
        self.step = next_step(self.step.paper, self.outlook)

    def advance(self) -> None:
        self.decide_again()
        step = self.step
        if step.action is None:
            return
        self.doing = step.kind
        try:
            with call_context.scope(item=self, tally=self.tally, source=step.action.source):
                paper = act(step, self.means)
        finally:
            self.doing = ""
        self.hold(replace(paper, waited_s=self.tally.waited_s))
        self.answer_cached()

    def answer_cached(self) -> None:
        """Run the lookups the metadata cache answers, at once: no host is paced for them. A stored answer that
        cannot be read is forgotten, and the lookup is asked again through the scheduler."""
        while self.step.free and self.step.action is not None:
            step, action = self.step, self.step.action
            assert isinstance(action, Lookup)
            try:
                with call_context.scope(item=self, tally=self.tally, source=action.source):
                    paper = act(step, self.means)
                if len(paper.failures) > len(step.paper.failures):
                    raise RuntimeError(paper.failures[-1].message)
            except Exception:  # noqa: BLE001 - an unreadable stored answer: ask again
                self.means.metadata.forget(action.url, action.params)
                paper = step.paper
            self.hold(paper)

    def restart(self, paper: Paper) -> None:
        """Take up *paper* again (a preprint given its own way back), as a job not finished."""
        self.finished = False
        self.hold(paper)

    def stop(self) -> None:
        """The batch stopped before this paper ended: its row says ``stopped`` (never a final answer)."""
        self.hold(replace(self.step.paper, stopped=True))

    def final(self) -> Paper:
        """The paper as it ends: its last decision applied, the transport's waits and any failure of the flow."""
        paper = self.step.paper
        if self.error is not None and paper.internal_error is None:
            paper = replace(paper, internal_error=(type(self.error).__name__, str(self.error)))
        return replace(paper, waited_s=self.tally.waited_s)

    def outcome(self) -> dict[str, object]:
        """The paper's outcome row."""
        return self.final().row()
