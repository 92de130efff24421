"""A distillation run: collect -> extract -> link -> reconcile -> write -> cursor, batch by batch, then project.

One run at a time: `memory/.distill.lock` is held for the whole run (another process's run
is waited for up to `lock_timeout` seconds, then DistillBusy says so). Each batch (the new
nodes of one session, or of one project's commits) is written durably before its cursor
moves, so a run killed at any point and run again ends with the same records as a run that
was never interrupted. Progress goes to a callback; `cancel` is checked at batch edges.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from filelock import FileLock, Timeout

from ..llm import ChatClient, LLMStopped, TokenBudget, is_configured
from ..memory.redaction_upgrade import redact_earlier_memory
from ..model import OpmemError
from ..privacy.exclusions import Exclusions, read_meta
from .collect import Pending, change_token, collect_commits, collect_session, pending_sessions, stamp_after
from .extract import extract_commits, extract_rules
from .link import LINK_TYPES, Linker
from .memory_port import MemoryPort, log_contradictions
from .model import Extraction, Progress, RunReport, SessionBatch, Written
from .parallel import POOL_MIN_NODES, Extracted, ExtractPool, new_nodes, pool_size, usable_cpus
from .project import project_all
from .reconcile import reconcile
from .state import DistillState, ProjectCursor, SessionCursor, load_state, read_inflight, save_state, write_inflight
from .withheld import sync_exclusions

if TYPE_CHECKING:
    from ..home import Home

LOCK_NAME = ".distill.lock"
SAVE_EVERY_S = 2.0  # cursors are saved at least this often (and at the end): moving them later is safe
FLUSH_RECORDS = 5000  # staged records written in one memory batch (one lock hold, one fsync)

ProgressFn = Callable[[Progress], Any]
CancelFn = Callable[[], bool]


class DistillBusy(OpmemError):
    """Another distillation run holds the lock."""


class LLMUnavailable(OpmemError):
    pass


@dataclass(frozen=True, slots=True)
class RunOptions:
    sessions: tuple[str, ...] | None = None  # None: every session with something new
    llm: bool | None = None  # None: as `[distill] extractor` says
    again: bool = False  # re-distil from the first node (duplicates supersede their older copies)
    commits: bool = True
    project: bool = True  # stage 5 at the end
    lock_timeout: float = 0.0
    flush_records: int = FLUSH_RECORDS
    scan: bool = False  # stat every session even when the store's change token says nothing changed
    workers: int | None = None  # None: as `[distill] workers` says (processes, parallel.py: 0 auto, 1 serial)
    pool_min_nodes: int = POOL_MIN_NODES  # new nodes from which a run reads and extracts on every core
    # False: the rules record what sessions did, not what they teach (no stack, commands, conventions,
    # state): the baseline bench/brief_real.py measures the knowledge rules against; runs serially
    knowledge: bool = True


@contextmanager
def run_lock(home: Home, timeout: float):
    home.memory_dir.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(home.memory_dir / LOCK_NAME), timeout=max(0.0, timeout))
    try:
        lock.acquire()
    except Timeout:
        waited = f" (waited {timeout:g} s)" if timeout > 0 else ""
        raise DistillBusy(f"another distillation is running{waited}; try again when it has finished") from None
    try:
        yield
    finally:
        lock.release()


@dataclass
class DistillJob:
    """The state of one run while it holds the lock (sleep.py drives one too)."""

    home: Home
    options: RunOptions
    progress: ProgressFn | None
    cancel: CancelFn | None
    now: float = field(default_factory=time.time)
    state: DistillState = field(default_factory=DistillState)
    port: MemoryPort | None = None
    linker: Linker | None = None
    client: ChatClient | None = None
    budget: TokenBudget | None = None
    written: Written = field(default_factory=Written)
    report: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    saved_at: float = 0.0
    dirty: bool = False
    touched: set[str] = field(default_factory=set)  # entity ids whose views stage 5 rebuilds
    distilled: set[str] = field(default_factory=set)  # sessions whose turns stage 5 indexes
    staged_sessions: dict[str, SessionCursor] = field(default_factory=dict)  # cursors that wait for a flush
    staged_projects: dict[str, ProjectCursor] = field(default_factory=dict)
    rules: Exclusions | None = None  # the privacy exclusions, read once per run

    # -- plumbing --------------------------------------------------------------------------------

    def memory(self) -> MemoryPort:
        if self.port is None:
            self.port = MemoryPort(self.home.memory, read_inflight(self.home.memory_dir, self.state))
        return self.port

    def link_stage(self) -> Linker:
        if self.linker is None:
            self.linker = Linker(self.memory().known_entities(LINK_TYPES))
        return self.linker

    def tell(self, stage: str, done: int, total: int, detail: str = "") -> None:
        if self.progress is not None:
            self.progress(Progress(stage, done, total, detail))

    def cancelled(self) -> bool:
        return self.cancel is not None and bool(self.cancel())

    def save(self, force: bool = False) -> None:
        if self.dirty and (force or time.monotonic() - self.saved_at >= SAVE_EVERY_S):
            save_state(self.home.memory_dir, self.state, durable=self.home.durable)
            self.saved_at = time.monotonic()
            self.dirty = False

    # -- one batch -------------------------------------------------------------------------------

    def llm(self) -> ChatClient | None:
        """The LLM client when this run uses one (decided at the first batch, from the options or config).
        An agent CLI that is missing leaves the run to the rules, with one note saying why."""
        if self.budget is None:
            self.client = _client(self.home, self.options.llm)
            ready = getattr(self.client, "prepare", None)
            if ready is not None:
                try:
                    ready()
                except LLMStopped as exc:
                    self.notes.append(f"LLM extractor: {exc}; distilled with the rules")
                    self.client = None
                else:
                    self.report["llm"] = self.client.describe()
            self.budget = TokenBudget(self.home.config.llm.token_budget if self.client is not None else 0)
        return self.client

    def extract(self, batch: SessionBatch) -> Extraction:
        extraction = extract_rules(batch, ingestion_time=self.now, knowledge=self.options.knowledge)
        if self.llm() is None or getattr(self.client, "stopped", None) is not None:
            return extraction  # no LLM, or it stopped (said once, by the batch that hit it)
        if self.client is not None and self.budget is not None:
            from .extract.llm import extract_llm  # jsonschema and the prompt load only when an LLM is used

            outcome = extract_llm(
                batch,
                self.client,
                self.budget,
                ingestion_time=self.now,
                batch_size=self.home.config.llm.batch_size,
                cancel=self.cancel,
            )
            self.report["llm_batches"] = self.report.get("llm_batches", 0) + outcome.batches
            self.report["llm_failed"] = self.report.get("llm_failed", 0) + outcome.failed
            extraction = extraction.merged(outcome.extraction)
        return extraction

    def stage(self, extraction: Extraction, old_nodes: frozenset[str] | None = None) -> None:
        """Link, reconcile, log contradictions, stage for the next flush.

        `old_nodes`: nodes an earlier run distilled; only events that point at one of them can
        have an older copy to supersede (None: any event may, as for `again` and project commits).
        """
        port = self.memory()
        linked = self.link_stage().link(extraction, at=self.now)
        reconciled = reconcile(
            linked,
            current_edges=port.current_edges,
            current_events=port.current_events,
            category_of=port.category_of,
            single_valued=self.home.config.distill.single_valued,
            at=self.now,
            maybe_copied=None
            if old_nodes is None or self.options.again
            else (lambda event: not old_nodes.isdisjoint(event.provenance.node_ids)),
        )
        log_contradictions(self.home.memory_dir, reconciled.contradictions, durable=self.home.durable)
        port.stage(reconciled)
        self.touched.update(e.id for e in extraction.entities)
        self.touched.update(x for e in extraction.edges for x in (e.from_id, e.to_id))
        self.report["contradictions"] = self.report.get("contradictions", 0) + len(reconciled.contradictions)
        self.notes.extend(extraction.notes)

    def flush(self, force: bool = False) -> None:
        """Write what is staged (durable), then move the cursors of the batches it held.

        The ids being written are noted first (memory/.distill-inflight.json): a run killed
        before its cursors move leaves them there, and the rerun reads those records as not
        stored until it stages them again, so it decides every batch the way this run did.
        """
        port = self.port
        if port is None or (not force and port.staged_records < self.options.flush_records):
            return
        durable = self.home.durable
        staged = port.staged_ids()
        number = self.state.flushes + 1
        if staged:
            write_inflight(
                self.home.memory_dir, staged | port.exclude, flush=number, after=port.exclude - staged, durable=durable
            )
        if port.staged_records and not self.state.unprojected:
            self.state.unprojected = True  # saved before the write: stage 5 owes a projection
            self.dirty = True
            self.save(force=True)
        self.written += port.flush()
        if self.staged_sessions or self.staged_projects:
            self.state.sessions.update(self.staged_sessions)
            self.state.projects.update(self.staged_projects)
            self.staged_sessions, self.staged_projects = {}, {}
            self.dirty = True
        if staged:  # saved with the cursors: the note above now reads as done
            self.state.flushes = number
            self.dirty = True
        self.save(force=True)
        if staged:
            port.exclude -= staged
            write_inflight(self.home.memory_dir, port.exclude, durable=durable)

    def exclusions(self) -> Exclusions:
        if self.rules is None:
            self.rules = self.home.exclusions()
        return self.rules

    def withheld(self, session_id: str) -> bool:
        """A private or excluded session: never distilled (its cursor stays, so readmitting it restarts it)."""
        meta = read_meta(self.home, session_id)
        why = self.exclusions().reason(meta) if meta is not None else None
        if why is None:
            if self.state.withheld.pop(session_id, None) is not None:
                self.dirty = True
            return False
        if self.state.withheld.get(session_id) != why:
            self.state.withheld[session_id] = why
            self.dirty = True
        return True

    def extract_here(self, pending: Pending) -> tuple[Extracted, ...] | None:
        """A pool worker's task for one session, in this process (parallel.py: while it waits)."""
        meta = read_meta(self.home, pending.session_id)
        if meta is not None and self.exclusions().reason(meta) is not None:
            return None
        batches = collect_session(self.home.sessions, self._projects(), pending)
        knowledge = self.options.knowledge
        return tuple(Extracted.of(extract_rules(b, ingestion_time=self.now, knowledge=knowledge), b) for b in batches)

    def session(self, pending: Pending, ready: Sequence[Extracted] | None = None) -> int:
        """Distil one session's new nodes; returns how many nodes were read.

        `ready`: its batches as a worker extracted them (parallel.py); None: read them here.
        """
        nodes = 0
        if self.withheld(pending.session_id):
            return 0
        if ready is None:
            batches = collect_session(self.home.sessions, self._projects(), pending)
            count = len(batches)
            parts: Iterable[Extracted] = (Extracted.of(self.extract(b), b) for b in batches)  # one at a time
        else:
            count, parts = len(ready), ready
        for position, part in enumerate(parts):
            self.stage(part.extraction, part.old_nodes)
            nodes += part.nodes
            last = position == count - 1
            self.staged_sessions[pending.session_id] = SessionCursor(part.last_seq, stamp_after(pending) if last else 0)
            self.flush()
            if not last and self.cancelled():
                break
        if not count and pending.session_id not in self.staged_sessions:
            # nothing new after all (a rewrite of an old node file): remember the stamp
            cursor = self.state.cursor(pending.session_id)
            self.state.sessions[pending.session_id] = cursor._replace(stamp=stamp_after(pending))
            self.dirty = True
        return nodes

    def _projects(self) -> Any:
        try:
            return self.home.projects
        except OpmemError:
            return None

    def _listed_projects(self) -> list[Any]:
        projects = self._projects()
        if projects is None:
            return []
        try:
            return list(projects.list_projects())
        except OpmemError:
            return []

    def commits(self) -> int:
        count = 0
        rules = self.exclusions()
        names = {p.id: (p.name, p.workdir) for p in self._listed_projects()}
        hidden: dict[str, bool] = {}

        def kept(commit: Any) -> bool:  # a commit an excluded session made says what that session did
            sid = commit.session_id
            if not sid:
                return True
            if sid not in hidden:
                meta = read_meta(self.home, sid)
                hidden[sid] = meta is not None and rules.reason(meta) is not None
            return not hidden[sid]

        for project in collect_commits(self._projects(), self.state, self.home.sessions):
            if self.cancelled():
                self.report["cancelled"] = True
                break
            name, workdir = names.get(project.project_id, ("", ""))
            if rules.project_reason(project.project_id, name, workdir):
                project = replace(project, commits=())  # an excluded project: its cursor moves, nothing is read
            elif project.commits:
                project = replace(project, commits=tuple(c for c in project.commits if kept(c)))
            if project.commits:
                self.stage(extract_commits(project, ingestion_time=self.now))
                count += len(project.commits)
            last_time = max((c.time for c in project.commits), default=0.0)
            self.staged_projects[project.project_id] = ProjectCursor(project.head, last_time)
            self.flush()
        return count


def _pool(job: DistillJob, pending: Sequence[Pending]) -> ExtractPool | None:
    """Worker processes for a large rules run (parallel.py); None: this run stays serial."""
    options, settings = job.options, job.home.config.distill
    if _uses_llm(job.home, options.llm) or len(pending) < 2 or not options.knowledge:
        return None
    workers = pool_size(options.workers if options.workers is not None else settings.workers, usable_cpus())
    if not workers or new_nodes(pending, options.pool_min_nodes) < options.pool_min_nodes:
        return None
    return ExtractPool(job.home, pending, workers, job.now, local=job.extract_here)


def _uses_llm(home: Home, wanted: bool | None) -> bool:
    return wanted if wanted is not None else home.config.distill.extractor == "llm"


def _client(home: Home, wanted: bool | None) -> ChatClient | None:
    settings = home.config.llm
    if not _uses_llm(home, wanted):
        return None
    from ..llm_cli import agent_chat  # `[llm] via` an agent CLI or Ollama

    chat = agent_chat(settings, home.path)
    if chat is not None:
        return chat  # type: ignore[return-value]  # the same chat() as ChatClient
    if not is_configured(settings):
        raise LLMUnavailable(
            f"{home.config.path}: the LLM extractor needs [llm] base_url (and model); the rules work without it"
        )
    return ChatClient(settings)


def run(
    home: Home,
    options: RunOptions = RunOptions(),
    *,
    progress: ProgressFn | None = None,
    cancel: CancelFn | None = None,
) -> RunReport:
    """Distil what is new. Raises DistillBusy when another run holds the lock past `lock_timeout`."""
    started = time.monotonic()
    if options.llm:
        _client(home, True).close()  # an LLM asked for but not configured: say so before anything runs
    job = DistillJob(home, options, progress, cancel)
    try:
        with run_lock(home, options.lock_timeout):
            upgraded = redact_earlier_memory(home, project_all)
            job.state = load_state(home.memory_dir)
            report = distil_pending(job, started)
            return replace(report, notes=(upgraded.message, *report.notes)) if upgraded else report
    finally:
        if job.client is not None:
            job.client.close()


def distil_pending(job: DistillJob, started: float) -> RunReport:
    """Every batch the cursors have not covered, then the project commits, then stage 5."""
    home, options = job.home, job.options
    leftover = job.state.unprojected
    whole = options.sessions is None
    token = change_token(home.sessions)  # read before the scan: a write after it changes it again
    if whole and not options.again and not options.scan and token and token == job.state.token:
        pending = []  # the store wrote nothing since every session was caught up
    else:
        pending = pending_sessions(home.sessions, job.state, only=options.sessions, again=options.again)
    sessions = nodes = 0
    cancelled = False
    trusted = True
    fingerprint = job.exclusions().fingerprint
    if fingerprint != job.state.exclusions:  # [memory] exclusions changed: withdraw / readmit what they cover
        job.notes.extend(sync_exclusions(home, job.state, job.exclusions(), job.touched))
        job.state.exclusions = fingerprint
        job.state.unprojected = True  # core.md and the touched views are re-projected below
        job.dirty = True
        if whole and not options.again:
            pending = pending_sessions(home.sessions, job.state, only=options.sessions)
    job.tell("collect", 0, len(pending), f"{len(pending)} sessions changed")
    pool = _pool(job, pending)
    try:
        for done, item in enumerate(pending):
            if job.cancelled():
                cancelled = True
                break
            read = job.session(item, pool.take(item) if pool is not None else None)
            if read:
                job.distilled.add(item.session_id)
            trusted = trusted and stamp_after(item) != 0
            if read:
                sessions += 1
                nodes += read
            job.tell("distil", done + 1, len(pending), item.session_id)
    finally:
        if pool is not None:
            job.notes.extend(pool.close())
    if whole and (pending or job.state.token != token):
        job.state.token = token if trusted and not cancelled else ""
        job.dirty = True
    commits = 0
    if options.commits and options.sessions is None and not cancelled:
        commits = job.commits()
        cancelled = bool(job.report.get("cancelled"))
    job.flush(force=True)
    job.save(force=True)
    if whole and not cancelled and job.port is not None and job.port.exclude:
        # every batch a killed run left in flight was staged again above; ids still noted are
        # stale (a note from before the flush numbers): read as not stored, they would hide facts
        job.port.exclude = set()
        write_inflight(home.memory_dir, set(), durable=home.durable)
    if options.project and not cancelled and (job.written.total or job.state.unprojected):
        job.tell("project", 0, 1, "core.md, views, index")
        if leftover:  # an earlier run wrote records and died before projecting them
            job.notes.extend(project_all(home, None, job.state.sessions))
        else:
            job.notes.extend(project_all(home, job.touched, job.distilled))
        job.state.unprojected = False
        job.dirty = True
        job.save(force=True)
        job.tell("project", 1, 1, "")
    return RunReport(
        sessions=sessions,
        nodes=nodes,
        commits=commits,
        written=job.written,
        contradictions=job.report.get("contradictions", 0),
        cancelled=cancelled,
        llm_batches=job.report.get("llm_batches", 0),
        llm_failed=job.report.get("llm_failed", 0),
        tokens=job.budget.used if job.budget is not None else 0,
        notes=tuple(job.notes),
        seconds=time.monotonic() - started,
        extra=_llm_used(job),
    )


def _llm_used(job: DistillJob) -> dict[str, Any]:
    """Which agent CLI (its version and the model that answered) the run's LLM calls went through."""
    describe = getattr(job.client, "describe", None)
    if describe is None:
        return {}
    return {"llm": describe(), "llm_calls": job.client.limits.calls}  # type: ignore[union-attr]


def flush(home: Home, session_ids: Sequence[str], *, lock_timeout: float = 30.0, llm: bool | None = None) -> RunReport:
    """Distil these sessions now (the pre-compress flush): waits for a running distillation."""
    return run(home, RunOptions(sessions=tuple(session_ids), llm=llm, lock_timeout=lock_timeout, commits=False))
