"""Runs: a lease that renews itself, and (0.4) a worker that takes runs
from the queue of a project.

RunLease holds one run under claim_run: it renews the lease after a
fraction of its ttl (a renewal mints a new fence), writes checkpoints with
the fence in hand, and releases.  Its calls hold one lock, so a write never
carries the fence a renewal in flight is replacing.

RunWorker (0.4: claim_next_run, park_run, conclude_run) claims the next
claimable run of a project and hands it to a handler with the run's newest
checkpoint (and, when it was parked on tasks, those tasks, settled) while a
thread keeps its lease renewed.  The handler writes checkpoints, parks the
run on tasks (a person's decision) or returns; a run whose handler returns
without parking is concluded.  When the lease is lost (a renewal refused,
WL007) or the run concluded under it (WL008), ``ctx.lost`` becomes true and
every later write fails: the step stops.
"""
from __future__ import annotations

import json
import threading
import time
from datetime import timedelta
from typing import Any, Callable, Dict, List, Optional, Sequence

import psycopg2
from psycopg2 import sql

from .client import Client
from .errors import RunConcludedError, StaleFenceError, WorklistError, from_driver
from .types import Checkpoint, ClaimedRun, Task
from .wait import Stopper, backoff


def _run(conn: Any, call: Callable[[], Any]) -> None:
    """A call on the worker's connection, its errors by SQLSTATE."""
    try:
        call()
    except psycopg2.Error as raw:
        raise from_driver(raw) from raw


class RunLease:
    """The lease of one run, for a holder, with a ttl in seconds."""

    def __init__(self, client: Client, project: str, session: str, run: str, holder: str,
                 ttl: float, renew_fraction: float = 0.5) -> None:
        if ttl <= 0:
            raise ValueError('ttl must be a positive number of seconds')
        self.client = client
        self.address = (project, session, run)
        self.holder = holder
        self.ttl = ttl
        self.renew_fraction = renew_fraction
        self.fence: Optional[int] = None        # the fence of the lease in hand
        self.claimed_at: Optional[float] = None  # time.monotonic() of the claim
        self.lock = threading.RLock()

    def claim(self) -> bool:
        """Takes (or renews) the lease; False when another holder has an
        unexpired one."""
        with self.lock:
            at = time.monotonic()
            lease = self.client.claim_run(*self.address, holder=self.holder,
                                          ttl=timedelta(seconds=self.ttl))
            if lease is None:
                return False
            self.fence, self.claimed_at = lease.fence, at
            return True

    def adopt(self, fence: int) -> None:
        """A lease taken by claim_next_run."""
        self.fence, self.claimed_at = fence, time.monotonic()

    @property
    def due(self) -> bool:
        return (self.claimed_at is None
                or time.monotonic() - self.claimed_at >= self.ttl * self.renew_fraction)

    def renew_if_due(self) -> bool:
        """Renews when a fraction of the ttl has passed; False when the
        lease is lost to another holder."""
        with self.lock:
            return self.claim() if self.due else True

    def write(self, checkpoint_id: str, body: Any, **options: Any) -> None:
        """write_checkpoint with the fence in hand (WL007 once another
        holder has claimed the run since)."""
        with self.lock:
            self.client.write_checkpoint(*self.address, checkpoint_id, body, fence=self.fence,
                                         **options)

    def release(self) -> None:
        """Gives the lease up (with a stale fence, nothing happens)."""
        with self.lock:
            if self.fence is not None:
                self.client.release_run(*self.address, self.fence)


class RunContext:
    """What a RunWorker handler is given: the run, its newest checkpoint,
    the tasks its park awaited, and the fenced calls."""

    def __init__(self, lease: RunLease, claimed: ClaimedRun, checkpoint: Optional[Checkpoint],
                 tasks: List[Optional[Task]], stopper: Stopper) -> None:
        self.run = claimed
        self.checkpoint = checkpoint
        self.tasks = tasks
        self.lost: Optional[BaseException] = None
        self.outcome: Optional[str] = None  # 'parked', 'concluded'
        self._lease = lease
        self._stopper = stopper

    @property
    def fence(self) -> Optional[int]:
        return self._lease.fence

    @property
    def stopping(self) -> bool:
        return self._stopper.requested

    def _guard(self, call: Callable[[], Any]) -> Any:
        if self.lost is not None:
            raise self.lost
        try:
            with self._lease.lock:
                return call()
        except (StaleFenceError, RunConcludedError) as err:
            self.lost = err
            raise

    def write(self, checkpoint_id: str, body: Any, **options: Any) -> None:
        self._guard(lambda: self._lease.write(checkpoint_id, body, **options))

    def park(self, checkpoint_id: str, tasks: Sequence[str], **options: Any) -> Checkpoint:
        lease = self._lease

        def park() -> Checkpoint:
            c = lease.client.park_run(*lease.address, checkpoint_id, tasks, fence=lease.fence,
                                      **options)
            self.outcome = 'parked'
            return c
        result: Checkpoint = self._guard(park)
        return result

    def conclude(self) -> int:
        lease = self._lease

        def conclude() -> int:
            n = lease.client.conclude_run(*lease.address, fence=lease.fence)
            self.outcome = 'concluded'
            return n
        result: int = self._guard(conclude)
        return result


RunHandler = Callable[[RunContext], Any]


class RunWorker:
    """The loop of one holder over the runs of a project (0.4)."""

    def __init__(self, client: Client, project: str, holder: str, handler: RunHandler, *,
                 session: Optional[str] = None, ttl: float = 30.0, renew_fraction: float = 0.5,
                 poll_seconds: float = 5.0,
                 on_event: Optional[Callable[[str, Dict[str, Any]], None]] = None) -> None:
        self.client = client
        self.project = project
        self.session = session
        self.holder = holder
        self.handler = handler
        self.ttl = ttl
        self.renew_fraction = renew_fraction
        self.poll_seconds = poll_seconds
        self.emit = on_event or (lambda name, info: None)
        self._stopper = Stopper()

    def stop(self) -> None:
        self._stopper.stop()

    def run(self, handle_signals: bool = True) -> None:
        with self._stopper.on_signals(handle_signals):
            failures = 0
            while not self._stopper.requested:
                conn = None
                try:
                    conn = self.client.connect()
                    failures = 0
                    self.emit('connected', {})
                    self._serve(conn)
                    self.client.disconnect(conn)
                except WorklistError as err:
                    if conn is not None:
                        self.client.disconnect(conn, broken=True)
                    if not err.transient:
                        raise
                    failures += 1
                    self.emit('connection_lost', {'error': err})
                    self._stopper.sleep(backoff(failures))
        self.emit('stopped', {})

    def _serve(self, conn: Any) -> None:
        wl = self.client.on(conn)
        channel = wl.channel()
        _run(conn, lambda: conn.cursor().execute(sql.SQL('LISTEN {}').format(sql.Identifier(channel))))
        self.emit('listening', {'channel': channel})
        while not self._stopper.requested:
            claimed = wl.claim_next_run(self.project, self.holder, timedelta(seconds=self.ttl),
                                        session=self.session)
            if claimed is not None:
                self._step(wl, claimed)
                continue
            deadline = time.monotonic() + self.poll_seconds
            while not self._stopper.requested and time.monotonic() < deadline:
                if self._stopper.wait(deadline - time.monotonic(), conn):
                    _run(conn, conn.poll)
                    wake = False
                    for note in conn.notifies:
                        try:
                            run = json.loads(note.payload).get('run', {})
                        except ValueError:
                            continue
                        wake = wake or bool(run.get('resumed') or run.get('released')
                                            or run.get('checkpointed'))
                    del conn.notifies[:]
                    if wake:
                        break
        _run(conn, lambda: conn.cursor().execute('UNLISTEN *'))

    def _step(self, wl: Client, claimed: ClaimedRun) -> None:
        lease = RunLease(wl, claimed.project, claimed.session, claimed.run, self.holder,
                         self.ttl, self.renew_fraction)
        lease.adopt(claimed.fence)
        self.emit('claimed', {'run': claimed})
        checkpoints = wl.list_checkpoints(claimed.project, claimed.session, claimed.run)
        checkpoint = checkpoints[-1] if checkpoints else None
        tasks = [wl.task(t) for t in (checkpoint.park_tasks or [])] if checkpoint else []
        ctx = RunContext(lease, claimed, checkpoint, tasks, self._stopper)
        done = threading.Event()

        def renew() -> None:
            while not done.wait(self.ttl * self.renew_fraction):
                try:
                    if not lease.claim():
                        ctx.lost = StaleFenceError('lease of run "%s" lost' % claimed.run)
                        return
                    self.emit('renewed', {'run': claimed, 'fence': lease.fence})
                except WorklistError as err:
                    if not err.transient:
                        ctx.lost = err
                        return
        renewer = threading.Thread(target=renew, daemon=True)
        renewer.start()
        try:
            try:
                self.handler(ctx)
            except (StaleFenceError, RunConcludedError) as err:
                self.emit('lost', {'run': claimed, 'error': err})
                return
            except Exception as err:  # the handler's own failure, or a call's
                if ctx.lost is not None:
                    self.emit('lost', {'run': claimed, 'error': ctx.lost})
                    return
                if isinstance(err, WorklistError) and err.transient:
                    raise
                self.emit('failed', {'run': claimed, 'error': err})
                lease.release()
                self._stopper.sleep(backoff(1))
                return
            if ctx.lost is not None:
                self.emit('lost', {'run': claimed, 'error': ctx.lost})
                return
            if ctx.outcome is None:
                ctx.conclude()
            self.emit(ctx.outcome or 'concluded', {'run': claimed})
        finally:
            done.set()
            renewer.join()
