"""TaskWorker: claims the tasks of one actor and hands each to a handler
that returns the decision; completes it; and never asks the handler twice
for a decision it already made.

On one connection of its own it LISTENs on the tenant's channel (and polls
as well, since notifications can be lost while work is not), and claims
with claim_next.  A decision is kept until the server has answered its
completion: when the connection breaks, the worker reconnects with backoff,
asks held() what this actor still holds, and sends each known decision
again (a retried complete converges: true again when it was ours), handing
to the handler only the tasks whose decision it does not know.  On stop it
releases the claims whose handler has not started; the handler in progress
finishes (it can watch ``ctx.stopping``).
"""
from __future__ import annotations

import json
import time
from typing import Any, Callable, Dict, List, Optional, Sequence

import psycopg2
from psycopg2 import sql

from .client import Client
from .errors import (AlreadyClaimedError, ExcludedError, NotFoundError, NotHeldError,
                     NotPendingError, WorklistError, from_driver)
from .types import Task
from .wait import Stopper, backoff

Event = Callable[[str, Dict[str, Any]], None]


class WorkContext:
    """What a handler is given beside the task."""

    def __init__(self, worker: 'TaskWorker', client: Client) -> None:
        self._stopper = worker._stopper
        self.client = client

    @property
    def stopping(self) -> bool:
        """True once the worker was asked to stop."""
        return self._stopper.requested

    def sleep(self, seconds: float) -> bool:
        """Sleeps up to seconds; True when a stop request cut it short."""
        return self._stopper.sleep(seconds)


Handler = Callable[[Task, WorkContext], Any]


class TaskWorker:
    """The loop of one actor: ``TaskWorker(client, actor, roles, handler).run()``.

    ``handler(task, ctx)`` returns the decision (any JSON value but None);
    None gives the task back (``release``) and skips it for ``skip_seconds``;
    an exception does the same, reported as ``failed``.  ``on_event(name,
    info)`` hears what happens: connected, listening, claimed, recovered,
    resending, completed, lost, released, failed, woken, connection_lost,
    unfinished, stopped.
    """

    def __init__(self, client: Client, actor: str, roles: Sequence[str], handler: Handler, *,
                 poll_seconds: float = 5.0, skip_seconds: float = 60.0,
                 on_event: Optional[Event] = None) -> None:
        self.client = client
        self.actor = actor
        self.roles = list(roles)
        self.handler = handler
        self.poll_seconds = poll_seconds
        self.skip_seconds = skip_seconds
        self.emit: Event = on_event or (lambda name, info: None)
        self.handler_calls = 0                  # how often the handler was called
        self.decided: Dict[str, Any] = {}       # id -> decision whose completion is unanswered
        self.backlog: List[Task] = []           # tasks held, their handler not started
        self.skip: Dict[str, float] = {}        # id -> monotonic time until which to skip it
        self.channel: Optional[str] = None
        self._stopper = Stopper()
        self._skip_supported = False

    def stop(self) -> None:
        """Asks the loop to stop (from a signal handler or another thread)."""
        self._stopper.stop()

    def run(self, handle_signals: bool = True) -> None:
        """Works until stop() (or SIGTERM/SIGINT when handle_signals).
        Returns once stopped; raises a permanent error (a binding missing,
        a bug)."""
        with self._stopper.on_signals(handle_signals):
            failures = 0
            while not (self._stopper.requested and not self.decided):
                conn = None
                try:
                    conn = self.client.connect()
                    failures = 0
                    self.emit('connected', {})
                    self._serve(conn)
                    self.client.disconnect(conn)
                    conn = None
                    break
                except WorklistError as err:
                    if conn is not None:
                        self.client.disconnect(conn, broken=True)
                    if not err.transient:
                        raise
                    failures += 1
                    self.emit('connection_lost', {'error': err})
                    if self._stopper.requested:
                        # stopping with decisions unsent: one more try each second or so
                        time.sleep(min(backoff(failures), 1.0))
                        if failures > 10:
                            break
                    else:
                        self._stopper.sleep(backoff(failures))
        for task_id in self.decided:
            self.emit('unfinished', {'id': task_id})
        self.emit('stopped', {})

    def _serve(self, conn: Any) -> None:
        wl = self.client.on(conn)
        self._skip_supported = wl.has_claim_next_skip()
        self._subscribe(wl, conn)
        self._recover(wl)
        while not self._stopper.requested:
            task = self.backlog.pop(0) if self.backlog else None
            if task is None:
                task = self._claim(wl)
                if task is not None:
                    self.emit('claimed', {'id': task.id, 'task': task})
            if task is not None:
                self._handle(wl, task)
                continue
            why = self._wait_for_work(wl, conn)
            if why in ('notification', 'poll'):
                self.emit('woken', {'why': why})
        # stopping: what the handler has not started goes back to the queue
        while self.backlog:
            self._release(wl, self.backlog[0].id)
            self.backlog.pop(0)
        self._execute(conn, 'UNLISTEN *')

    @staticmethod
    def _execute(conn: Any, query: Any) -> None:
        try:
            with conn.cursor() as cur:
                cur.execute(query)
        except psycopg2.Error as raw:
            raise from_driver(raw) from raw

    def _subscribe(self, wl: Client, conn: Any) -> None:
        """LISTEN before looking at the queue, so that nothing opened in
        between goes unnoticed."""
        old = self.channel
        self.channel = wl.channel()
        if old and old != self.channel:
            self._execute(conn, sql.SQL('UNLISTEN {}').format(sql.Identifier(old)))
        self._execute(conn, sql.SQL('LISTEN {}').format(sql.Identifier(self.channel)))
        self.emit('listening', {'channel': self.channel})

    def _recover(self, wl: Client) -> None:
        """After every (re)connect, before any new work.  held() is the
        server's word on what this actor holds: a task whose decision is
        known goes straight to complete, the others to the handler.  A
        decision whose task is not held any more is sent again too: its
        answer tells whether it went through (True) or somebody else settled
        the task (False)."""
        held = wl.held(self.actor, lim=1000)
        held_ids = {t.id for t in held}
        self.backlog = []
        for task in held:
            self.emit('recovered', {'id': task.id, 'task': task})
            if task.id not in self.decided:
                self.backlog.append(task)
        for task_id, decision in list(self.decided.items()):
            self.emit('resending', {'id': task_id, 'held': task_id in held_ids})
            self._send_completion(wl, task_id, decision)

    def _claim(self, wl: Client) -> Optional[Task]:
        now = time.monotonic()
        self.skip = {k: v for k, v in self.skip.items() if v > now}
        if not self.skip:
            return wl.claim_next(self.actor, self.roles)
        if self._skip_supported:
            return wl.claim_next(self.actor, self.roles, skip=list(self.skip))
        # A server without claim_next's skip (before 0.4): the queue, less
        # the tasks to skip, claimed one at a time.
        for t in wl.queue(self.roles, lim=min(1000, len(self.skip) + 10), actor=self.actor):
            if t.id in self.skip:
                continue
            try:
                return wl.claim(t.id, self.actor, self.roles)
            except (AlreadyClaimedError, NotPendingError, NotFoundError):
                continue
        return None

    def _handle(self, wl: Client, task: Task) -> None:
        if task.id in self.decided:
            decision = self.decided[task.id]
        else:
            self.handler_calls += 1
            failure: Optional[BaseException] = None
            try:
                decision = self.handler(task, WorkContext(self, wl))
            except WorklistError as err:
                if err.transient:
                    raise
                decision, failure = None, err
            except Exception as err:  # the handler's own failure
                decision, failure = None, err
            if failure is not None:
                self.emit('failed', {'id': task.id, 'error': failure})
            if decision is None:
                # no decision: the handler gave the task up (or was stopped)
                if not self._stopper.requested or failure is not None:
                    self.skip[task.id] = time.monotonic() + self.skip_seconds
                self._release(wl, task.id)
                return
            self.decided[task.id] = decision
        self._send_completion(wl, task.id, decision)

    def _send_completion(self, wl: Client, task_id: str, decision: Any) -> None:
        """complete(), whose answer settles what to do with the decision:
        True, completed by this actor (by this call or an earlier one whose
        answer was lost); False, somebody else settled it; WL006, the claim
        was taken (a take-over, a claim timeout); WL001/WL002, the task is
        gone or barred.  A transient error keeps the decision for the next
        connection."""
        try:
            settled = wl.complete(task_id, self.actor, decision)
        except (NotHeldError, NotFoundError, ExcludedError) as err:
            del self.decided[task_id]
            self.emit('lost', {'id': task_id, 'error': err})
            return
        del self.decided[task_id]
        if settled:
            self.emit('completed', {'id': task_id, 'decision': decision})
        else:
            self.emit('lost', {'id': task_id, 'error': None})

    def _release(self, wl: Client, task_id: str) -> None:
        try:
            wl.release(task_id, self.actor)
        except (NotHeldError, NotFoundError):
            pass  # not ours any more, or an earlier release went through
        self.emit('released', {'id': task_id})

    def _wait_for_work(self, wl: Client, conn: Any) -> str:
        """'notification', 'poll' or 'stop'.  A broken connection raises."""
        deadline = time.monotonic() + self.poll_seconds
        while not self._stopper.requested:
            if self._worth_a_look(wl, conn):
                return 'notification'
            left = deadline - time.monotonic()
            if left <= 0:
                return 'poll'
            if self._stopper.wait(left, conn):
                try:
                    conn.poll()
                except psycopg2.Error as raw:
                    raise from_driver(raw) from raw
        return 'stop'

    def _worth_a_look(self, wl: Client, conn: Any) -> bool:
        """Reads the notifications received.  Only tasks that became
        claimable are worth a look; {"rotated": true}: an admin replaced
        the channel."""
        wake = rotated = False
        for note in conn.notifies:
            try:
                payload = json.loads(note.payload)
            except ValueError:
                continue
            rotated = rotated or bool(payload.get('rotated'))
            task = payload.get('task', {})
            if task.get('opened') or task.get('released') or task.get('escalated'):
                wake = True
        del conn.notifies[:]
        if rotated:
            self._subscribe(wl, conn)
        return wake or rotated
