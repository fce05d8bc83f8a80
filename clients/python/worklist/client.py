"""Client: the verbs of one tenant, over one connection of its own, a
pool, or a connection of the caller's.

A verb is one statement.  Outside a transaction of the caller's it also
sets the tenant for its own transaction, in the same statement:

    SELECT (x.r).* FROM (SELECT worklist.verb("arg" => %s::type, ...) AS r
      FROM (SELECT pg_catalog.set_config('worklist.tenant', %s, true) AS tenant OFFSET 0) s
      WHERE s.tenant IS NOT NULL OFFSET 0) x

The verb is computed from the row that sets the tenant, so it runs after
the setting, in the same transaction (autocommit: the statement's own), and the setting
ends with that transaction: nothing of the tenant stays on the connection
for the next user of a pool or a pooler.  Inside transaction() the tenant
is set once, at BEGIN, and each verb is the bare call.  Only the arguments
given (not None) are sent, by name, so every other argument keeps the
server's default.
"""
from __future__ import annotations

import contextlib
import json
import numbers
import random
import time
from datetime import datetime, timedelta
from typing import (Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Type,
                    TypeVar, Union)

import psycopg2

from .errors import (ConfigurationError, ConnectionLostError, InvalidArgumentError,
                     SerializationError, from_driver)
from .types import (Checkpoint, ClaimedRun, DurableRun, DurableRunPage, Retention,
                    RunLeaseRow, RunValue, RunWrite, Settled, SweepResult, Task, TaskEvent, TicketEvent,
                    TicketFold, build)

T = TypeVar('T')
Interval = Union[timedelta, str]
Arg = Tuple[str, str, Any]

_TENANT = "SELECT pg_catalog.set_config('worklist.tenant', %s, true) AS tenant"
_SET_TENANT = _TENANT + ' OFFSET 0'


def _unsendable(text: str) -> bool:
    """Text PostgreSQL cannot take: a NUL, or a lone surrogate (no UTF-8)."""
    if '\x00' in text:
        return True
    try:
        text.encode('utf-8')
    except UnicodeEncodeError:
        return True
    return False


def _encode(name: str, sqltype: str, value: Any) -> Any:
    if value is None:
        return None
    if sqltype in ('bigint', 'integer', 'integer[]'):
        # a float would be rounded by the cast (a fence of 9.5 becomes 10)
        many = sqltype == 'integer[]'
        if many and isinstance(value, (str, bytes)):
            raise TypeError('an array argument must be a sequence, not a string')
        ints = list(value) if many else [value]
        for v in ints:
            if isinstance(v, bool) or not isinstance(v, numbers.Integral):
                raise TypeError('argument "%s" (%s) takes ints, not %s'
                                % (name, sqltype, type(v).__name__))
        return [int(v) for v in ints] if many else int(value)
    if sqltype in ('text', 'text[]'):
        texts = [value] if isinstance(value, str) else (
            value if not isinstance(value, (str, bytes)) else [])
        if any(isinstance(t, str) and _unsendable(t) for t in texts):
            raise InvalidArgumentError(
                'argument "%s" contains a NUL or an unpaired surrogate, which PostgreSQL '
                'text cannot hold' % name)
    if sqltype == 'jsonb':
        return json.dumps(value)
    if sqltype == 'jsonb[]':
        return [json.dumps(v) for v in value]
    if sqltype == 'timestamptz':
        if isinstance(value, datetime) and value.tzinfo is None:
            raise TypeError('a timestamptz argument must be an aware datetime')
        return value
    if sqltype.endswith('[]'):
        if isinstance(value, (str, bytes)):
            raise TypeError('an array argument must be a sequence, not a string')
        return list(value)
    return value


def _statement(verb: str, args: Sequence[Arg], returns: str, set_tenant: bool) -> str:
    call = 'worklist.%s(%s)' % (verb, ', '.join('"%s" => %%s::%s' % (name, sqltype)
                                                 for name, sqltype, _ in args))
    if set_tenant:
        source = ('(SELECT %s AS r FROM (%s) s WHERE s.tenant IS NOT NULL OFFSET 0) x'
                  % (call, _SET_TENANT))
    else:
        source = '(SELECT %s AS r OFFSET 0) x' % call
    if returns in ('scalar', 'void'):
        return 'SELECT x.r AS value FROM %s' % source
    if returns == 'page':
        return ('SELECT (x.r).cursor AS "page cursor", e.* FROM %s'
                ' LEFT JOIN LATERAL pg_catalog.unnest((x.r).entries) e ON true' % source)
    return 'SELECT (x.r).* FROM %s' % source


def _end(conn: Any, command: str) -> None:
    """COMMIT or ROLLBACK of the transaction of transaction()."""
    if not conn.autocommit:
        conn.commit() if command == 'COMMIT' else conn.rollback()
        return
    with conn.cursor() as cur:
        cur.execute(command)


_CONFIGURATION_MESSAGES = ('does not exist', 'authentication failed', 'no pg_hba.conf entry',
                           'password')


class Client:
    """The verbs of one tenant.

    Client(tenant, dsn='', **connect_kwargs): a connection of its own, made
    when first needed (libpq's PG* environment variables fill in what the
    dsn leaves out) and made again after it broke.
    Client(tenant, pool=pool): a connection from a psycopg2.pool per call.
    Client(tenant, connection=conn): the caller's connection, as it is.

    Method names and argument names are the contract's.  An argument left
    at None is not sent: the server's default applies.  A serialization
    failure or deadlock outside a transaction is retried up to ``retries``
    times (the statement alone was rolled back).
    """

    def __init__(self, tenant: str, dsn: str = '', *, pool: Any = None,
                 connection: Any = None, retries: int = 3,
                 on_connect: Optional[Callable[[Any], None]] = None,
                 **connect_kwargs: Any) -> None:
        if not isinstance(tenant, str) or not tenant:
            raise TypeError('tenant must be a non-empty string')
        self.tenant = tenant
        self._dsn = dsn
        self._connect_kwargs = connect_kwargs
        self._pool = pool
        self._bound = connection
        self._own: Any = None
        self._in_transaction = False
        self._retries = retries
        self._on_connect = on_connect

    # -- connections ---------------------------------------------------------

    def connect(self) -> Any:
        """A new connection of its own (autocommit), for LISTEN and the
        worker loops; close it when done."""
        if self._pool is not None:
            conn = self._pool.getconn()
        else:
            try:
                conn = psycopg2.connect(self._dsn, **self._connect_kwargs)
            except psycopg2.Error as raw:
                err = from_driver(raw)
                if (isinstance(err, ConnectionLostError)
                        and any(m in err.message for m in _CONFIGURATION_MESSAGES)):
                    err = ConfigurationError(err.message)
                raise err from raw
        conn.autocommit = True
        if self._on_connect is not None:
            self._on_connect(conn)
        return conn

    def disconnect(self, conn: Any, broken: bool = False) -> None:
        """Gives back a connection from connect()."""
        if self._pool is not None:
            self._pool.putconn(conn, close=broken or bool(conn.closed))
        elif not conn.closed:
            conn.close()

    def on(self, connection: Any) -> 'Client':
        """The same tenant, on one connection of the caller's."""
        other = Client(self.tenant, connection=connection, retries=0)
        return other

    def close(self) -> None:
        """Closes the connection of its own, if any."""
        if self._own is not None:
            self._own.close()
            self._own = None

    def _acquire(self) -> Any:
        if self._bound is not None:
            return self._bound
        if self._pool is not None:
            return self.connect()
        if self._own is None or self._own.closed:
            self._own = self.connect()
        return self._own

    def _give_back(self, conn: Any, broken: bool) -> None:
        if self._bound is not None:
            return
        if self._pool is not None:
            self.disconnect(conn, broken)
        elif broken:
            self.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator['Client']:
        """A transaction on one connection, the tenant set once for all of
        it; commits at the end of the with block, rolls back on an error."""
        conn = self._acquire()
        tx = self.on(conn)
        tx._in_transaction = True
        broken = False
        try:
            with conn.cursor() as cur:
                try:
                    cur.execute(('BEGIN; ' if conn.autocommit else '') + _TENANT, (self.tenant,))
                except psycopg2.Error as raw:
                    broken = bool(conn.closed)
                    raise from_driver(raw) from raw
            yield tx
            try:
                _end(conn, 'COMMIT')
            except psycopg2.Error as raw:
                broken = bool(conn.closed)
                raise from_driver(raw) from raw
        except BaseException:
            try:
                _end(conn, 'ROLLBACK')
            except psycopg2.Error:
                broken = True
            raise
        finally:
            self._give_back(conn, broken)

    # -- calls -----------------------------------------------------------------

    def _execute(self, query: str, params: Sequence[Any]) -> Tuple[List[str], List[Tuple[Any, ...]]]:
        attempt = 0
        while True:
            conn = self._acquire()
            broken = False
            try:
                with conn.cursor() as cur:
                    cur.execute(query, params)
                    if cur.description is None:
                        return [], []
                    return [d[0] for d in cur.description], cur.fetchall()
            except psycopg2.Error as raw:
                err = from_driver(raw)
                broken = isinstance(err, ConnectionLostError) or bool(conn.closed)
                if (isinstance(err, SerializationError) and attempt < self._retries
                        and not self._in_transaction):
                    attempt += 1
                    time.sleep(0.01 * 2 ** attempt * (1 + random.random()))
                    continue
                raise err from raw
            finally:
                self._give_back(conn, broken)

    def _call(self, verb: str, returns: str, args: Sequence[Arg],
              required: int) -> Tuple[List[str], List[Tuple[Any, ...]]]:
        sent = [a for i, a in enumerate(args) if i < required or a[2] is not None]
        set_tenant = not self._in_transaction
        query = _statement(verb, sent, returns, set_tenant)
        # the verb's arguments come first in the text, the tenant last
        params = [_encode(name, sqltype, value) for name, sqltype, value in sent]
        return self._execute(query, params + ([self.tenant] if set_tenant else []))

    def _scalar(self, verb: str, args: Sequence[Arg] = (), required: int = 0) -> Any:
        _, rows = self._call(verb, 'scalar', args, required)
        return rows[0][0]

    def _void(self, verb: str, args: Sequence[Arg], required: int) -> None:
        self._call(verb, 'void', args, required)

    def _maybe(self, cls: Type[T], key: str, verb: str, args: Sequence[Arg],
               required: int) -> Optional[T]:
        names, rows = self._call(verb, 'row', args, required)
        if not rows or rows[0][names.index(key)] is None:
            return None
        return build(cls, names, rows[0])

    def _one(self, cls: Type[T], key: str, verb: str, args: Sequence[Arg], required: int) -> T:
        row = self._maybe(cls, key, verb, args, required)
        if row is None:
            raise RuntimeError('worklist.%s returned no row' % verb)
        return row

    def _many(self, cls: Type[T], key: str, verb: str, args: Sequence[Arg],
              required: int) -> List[T]:
        names, rows = self._call(verb, 'rows', args, required)
        k = names.index(key)
        return [build(cls, names, r) for r in rows if r[k] is not None]

    def has_claim_next_skip(self) -> bool:
        """Whether the server's claim_next takes a skip list (0.4)."""
        _, rows = self._execute(
            "SELECT EXISTS (SELECT FROM pg_catalog.pg_proc WHERE proname = 'claim_next'"
            " AND pronargs = 3 AND pronamespace = 'worklist'::pg_catalog.regnamespace)", ())
        return bool(rows[0][0])

    # -- tenancy -----------------------------------------------------------------

    def grant_tenant(self, tenant: str, role: str, kind: Optional[str] = None) -> None:
        self._void('grant_tenant', [('tenant', 'text', tenant), ('role', 'regrole', role),
                                    ('kind', 'worklist.binding_kind', kind)], 2)

    def revoke_tenant(self, tenant: str, role: str) -> None:
        self._void('revoke_tenant', [('tenant', 'text', tenant), ('role', 'regrole', role)], 2)

    def erase_tenant(self) -> int:
        return int(self._scalar('erase_tenant'))

    # -- tasks ---------------------------------------------------------------------

    def open_task(self, id: str, case_id: str, roles: Sequence[str], run_id: Optional[str] = None,
                  payload: Any = None, priority: Optional[int] = None,
                  due_at: Optional[datetime] = None, expiry_policy: Optional[str] = None,
                  excluded: Optional[Sequence[str]] = None,
                  escalation_roles: Optional[Sequence[str]] = None,
                  claim_timeout: Optional[Interval] = None) -> Task:
        return self._one(Task, 'id', 'open_task', [
            ('id', 'text', id), ('case_id', 'text', case_id), ('roles', 'text[]', roles),
            ('run_id', 'text', run_id), ('payload', 'jsonb', payload),
            ('priority', 'integer', priority), ('due_at', 'timestamptz', due_at),
            ('expiry_policy', 'worklist.expiry_policy', expiry_policy),
            ('excluded', 'text[]', excluded), ('escalation_roles', 'text[]', escalation_roles),
            ('claim_timeout', 'interval', claim_timeout)], 3)

    def task(self, id: str) -> Optional[Task]:
        return self._maybe(Task, 'id', 'task', [('id', 'text', id)], 1)

    def claim(self, id: str, actor: str, roles: Sequence[str]) -> Task:
        return self._one(Task, 'id', 'claim', [('id', 'text', id), ('actor', 'text', actor),
                                               ('roles', 'text[]', roles)], 3)

    def claim_next(self, actor: str, roles: Sequence[str],
                   skip: Optional[Sequence[str]] = None) -> Optional[Task]:
        return self._maybe(Task, 'id', 'claim_next', [('actor', 'text', actor),
                                                      ('roles', 'text[]', roles),
                                                      ('skip', 'text[]', skip)], 2)

    def release(self, id: str, actor: str) -> None:
        self._void('release', [('id', 'text', id), ('actor', 'text', actor)], 2)

    def take_over(self, id: str, from_actor: str, actor: str, roles: Sequence[str]) -> Task:
        return self._one(Task, 'id', 'take_over', [
            ('id', 'text', id), ('from_actor', 'text', from_actor), ('actor', 'text', actor),
            ('roles', 'text[]', roles)], 4)

    def complete(self, id: str, actor: str, decision: Any) -> bool:
        return bool(self._scalar('complete', [('id', 'text', id), ('actor', 'text', actor),
                                              ('decision', 'jsonb', decision)], 3))

    def set_state(self, id: str, state: str) -> bool:
        return bool(self._scalar('set_state', [('id', 'text', id),
                                               ('state', 'worklist.task_state', state)], 2))

    def escalate(self, id: str) -> Task:
        return self._one(Task, 'id', 'escalate', [('id', 'text', id)], 1)

    def withdraw_run(self, run_id: str, awaited: Sequence[str]) -> int:
        return int(self._scalar('withdraw_run', [('run_id', 'text', run_id),
                                                 ('awaited', 'text[]', awaited)], 2))

    def queue(self, roles: Sequence[str], lim: Optional[int] = None,
              actor: Optional[str] = None) -> List[Task]:
        return self._many(Task, 'id', 'queue', [('roles', 'text[]', roles), ('lim', 'integer', lim),
                                                ('actor', 'text', actor)], 1)

    def for_case(self, case_id: str) -> List[Task]:
        return self._many(Task, 'id', 'for_case', [('case_id', 'text', case_id)], 1)

    def held(self, actor: str, lim: Optional[int] = None) -> List[Task]:
        return self._many(Task, 'id', 'held', [('actor', 'text', actor), ('lim', 'integer', lim)], 1)

    def open_count(self) -> int:
        return int(self._scalar('open_count'))

    def overdue(self, now: Optional[datetime] = None, lim: Optional[int] = None) -> List[Task]:
        return self._many(Task, 'id', 'overdue', [('now', 'timestamptz', now),
                                                  ('lim', 'integer', lim)], 0)

    def sweep(self, now: Optional[datetime] = None, lim: Optional[int] = None) -> SweepResult:
        return self._one(SweepResult, 'denied', 'sweep', [('now', 'timestamptz', now),
                                                          ('lim', 'integer', lim)], 0)

    # -- tasks, 0.4 ------------------------------------------------------------------

    def task_history(self, id: str, after: Optional[int] = None,
                     lim: Optional[int] = None) -> List[TaskEvent]:
        return self._many(TaskEvent, 'task_id', 'task_history', [
            ('id', 'text', id), ('after', 'integer', after), ('lim', 'integer', lim)], 1)

    def note(self, id: str, actor: str, body: str) -> TaskEvent:
        return self._one(TaskEvent, 'task_id', 'note', [
            ('id', 'text', id), ('actor', 'text', actor), ('body', 'text', body)], 3)

    def hand_over(self, id: str, actor: str, to_actor: str, to_roles: Sequence[str]) -> Task:
        return self._one(Task, 'id', 'hand_over', [
            ('id', 'text', id), ('actor', 'text', actor), ('to_actor', 'text', to_actor),
            ('to_roles', 'text[]', to_roles)], 4)

    def update_task(self, id: str, priority: Optional[int] = None,
                    due_at: Optional[Union[datetime, str]] = None) -> Task:
        return self._one(Task, 'id', 'update_task', [
            ('id', 'text', id), ('priority', 'integer', priority),
            ('due_at', 'timestamptz', due_at)], 1)

    def claims(self, lim: Optional[int] = None) -> List[Task]:
        return self._many(Task, 'id', 'claims', [('lim', 'integer', lim)], 0)

    def claim_many(self, actor: str, roles: Sequence[str], n: Optional[int],
                   skip: Optional[Sequence[str]] = None) -> List[Task]:
        return self._many(Task, 'id', 'claim_many', [
            ('actor', 'text', actor), ('roles', 'text[]', roles), ('n', 'integer', n),
            ('skip', 'text[]', skip)], 3)

    def complete_many(self, actor: str, ids: Sequence[str],
                      decisions: Sequence[Any]) -> List[Settled]:
        return self._many(Settled, 'id', 'complete_many', [
            ('actor', 'text', actor), ('ids', 'text[]', ids),
            ('decisions', 'jsonb[]', decisions)], 3)

    # -- tickets ---------------------------------------------------------------------

    def open_ticket(self, id: str, requester: str, title: str, body: Any = None,
                    authorities: Optional[Sequence[str]] = None,
                    open_deadline: Optional[datetime] = None,
                    confirm_window: Optional[Interval] = None,
                    ladder: Optional[Sequence[Interval]] = None) -> TicketFold:
        return self._one(TicketFold, 'ticket', 'open_ticket', [
            ('id', 'text', id), ('requester', 'text', requester), ('title', 'text', title),
            ('body', 'jsonb', body), ('authorities', 'text[]', authorities),
            ('open_deadline', 'timestamptz', open_deadline),
            ('confirm_window', 'interval', confirm_window), ('ladder', 'interval[]', ladder)], 3)

    def report(self, ticket: str, actor: str, value: str, not_before: Optional[datetime] = None,
               reason: Optional[str] = None, at: Optional[datetime] = None) -> TicketFold:
        return self._one(TicketFold, 'ticket', 'report', [
            ('ticket', 'text', ticket), ('actor', 'text', actor),
            ('value', 'worklist.participation', value), ('not_before', 'timestamptz', not_before),
            ('reason', 'text', reason), ('at', 'timestamptz', at)], 3)

    def close_ticket(self, ticket: str, actor: str, outcome: str, reason: Optional[str] = None,
                     at: Optional[datetime] = None) -> TicketFold:
        return self._one(TicketFold, 'ticket', 'close_ticket', [
            ('ticket', 'text', ticket), ('actor', 'text', actor),
            ('outcome', 'worklist.outcome', outcome), ('reason', 'text', reason),
            ('at', 'timestamptz', at)], 3)

    def ticket_state(self, ticket: str, now: Optional[datetime] = None) -> TicketFold:
        return self._one(TicketFold, 'ticket', 'ticket_state', [
            ('ticket', 'text', ticket), ('now', 'timestamptz', now)], 1)

    def ticket_history(self, ticket: str) -> List[TicketEvent]:
        return self._many(TicketEvent, 'ticket', 'ticket_history', [('ticket', 'text', ticket)], 1)

    def overdue_tickets(self, now: Optional[datetime] = None,
                        lim: Optional[int] = None) -> List[TicketFold]:
        return self._many(TicketFold, 'ticket', 'overdue_tickets', [
            ('now', 'timestamptz', now), ('lim', 'integer', lim)], 0)

    # -- runs ------------------------------------------------------------------------

    def write_checkpoint(self, project: str, session: str, run: str, checkpoint_id: str,
                         body: Any, fence: Optional[int] = None,
                         parent_run: Optional[str] = None, created_at: Optional[datetime] = None,
                         run_created_at: Optional[datetime] = None,
                         park_request: Optional[str] = None, parked_at: Optional[datetime] = None,
                         park_deadline: Optional[datetime] = None,
                         park_resolved_at: Optional[datetime] = None, metadata: Any = None,
                         parent_checkpoint_id: Optional[str] = None) -> None:
        self._void('write_checkpoint', [
            ('project', 'text', project), ('session', 'text', session), ('run', 'text', run),
            ('checkpoint_id', 'text', checkpoint_id), ('body', 'jsonb', body),
            ('fence', 'bigint', fence), ('parent_run', 'text', parent_run),
            ('created_at', 'timestamptz', created_at),
            ('run_created_at', 'timestamptz', run_created_at),
            ('park_request', 'text', park_request), ('parked_at', 'timestamptz', parked_at),
            ('park_deadline', 'timestamptz', park_deadline),
            ('park_resolved_at', 'timestamptz', park_resolved_at),
            ('metadata', 'jsonb', metadata),
            ('parent_checkpoint_id', 'text', parent_checkpoint_id)], 5)

    def read_checkpoint(self, project: str, session: str, run: str,
                        checkpoint_id: str) -> Optional[Checkpoint]:
        return self._maybe(Checkpoint, 'project', 'read_checkpoint', [
            ('project', 'text', project), ('session', 'text', session), ('run', 'text', run),
            ('checkpoint_id', 'text', checkpoint_id)], 4)

    def list_checkpoints(self, project: str, session: str, run: str) -> List[Checkpoint]:
        return self._many(Checkpoint, 'project', 'list_checkpoints', [
            ('project', 'text', project), ('session', 'text', session), ('run', 'text', run)], 3)

    def delete_checkpoint(self, project: str, session: str, run: str, checkpoint_id: str) -> None:
        self._void('delete_checkpoint', [
            ('project', 'text', project), ('session', 'text', session), ('run', 'text', run),
            ('checkpoint_id', 'text', checkpoint_id)], 4)

    def prune_checkpoints(self, project: str, session: str, run: str, keep: int) -> int:
        return int(self._scalar('prune_checkpoints', [
            ('project', 'text', project), ('session', 'text', session), ('run', 'text', run),
            ('keep', 'integer', keep)], 4))

    def claim_run(self, project: str, session: str, run: str, holder: str, ttl: Interval,
                  now: Optional[datetime] = None) -> Optional[RunLeaseRow]:
        return self._maybe(RunLeaseRow, 'holder', 'claim_run', [
            ('project', 'text', project), ('session', 'text', session), ('run', 'text', run),
            ('holder', 'text', holder), ('ttl', 'interval', ttl), ('now', 'timestamptz', now)], 5)

    def release_run(self, project: str, session: str, run: str, fence: int,
                    now: Optional[datetime] = None) -> None:
        self._void('release_run', [
            ('project', 'text', project), ('session', 'text', session), ('run', 'text', run),
            ('fence', 'bigint', fence), ('now', 'timestamptz', now)], 4)

    def list_durable_runs(self, project: Optional[str] = None, session: Optional[str] = None,
                          order_by: Optional[str] = None, park: Optional[Sequence[str]] = None,
                          claimed: Optional[bool] = None, lim: Optional[int] = None,
                          cursor: Optional[str] = None, now: Optional[datetime] = None,
                          concluded: Optional[bool] = None) -> DurableRunPage:
        names, rows = self._call('list_durable_runs', 'page', [
            ('project', 'text', project), ('session', 'text', session),
            ('order_by', 'text', order_by), ('park', 'worklist.park_state[]', park),
            ('claimed', 'boolean', claimed), ('lim', 'integer', lim), ('cursor', 'text', cursor),
            ('now', 'timestamptz', now), ('concluded', 'boolean', concluded)], 0)
        key = names.index('project')
        entries = [build(DurableRun, names, r) for r in rows if r[key] is not None]
        return DurableRunPage(entries, rows[0][0] if rows else None)

    # -- runs, 0.4 -------------------------------------------------------------------

    def park_run(self, project: str, session: str, run: str, checkpoint_id: str,
                 tasks: Sequence[str], fence: Optional[int] = None, body: Any = None,
                 park_request: Optional[str] = None, park_deadline: Optional[datetime] = None,
                 now: Optional[datetime] = None, metadata: Any = None,
                 parent_checkpoint_id: Optional[str] = None) -> Checkpoint:
        return self._one(Checkpoint, 'project', 'park_run', [
            ('project', 'text', project), ('session', 'text', session), ('run', 'text', run),
            ('checkpoint_id', 'text', checkpoint_id), ('tasks', 'text[]', tasks),
            ('fence', 'bigint', fence), ('body', 'jsonb', body),
            ('park_request', 'text', park_request), ('park_deadline', 'timestamptz', park_deadline),
            ('now', 'timestamptz', now), ('metadata', 'jsonb', metadata),
            ('parent_checkpoint_id', 'text', parent_checkpoint_id)], 5)

    def claim_next_run(self, project: str, holder: str, ttl: Interval,
                       session: Optional[str] = None,
                       now: Optional[datetime] = None) -> Optional[ClaimedRun]:
        return self._maybe(ClaimedRun, 'project', 'claim_next_run', [
            ('project', 'text', project), ('holder', 'text', holder), ('ttl', 'interval', ttl),
            ('session', 'text', session), ('now', 'timestamptz', now)], 3)

    def conclude_run(self, project: str, session: str, run: str, fence: Optional[int] = None,
                     now: Optional[datetime] = None) -> int:
        return int(self._scalar('conclude_run', [
            ('project', 'text', project), ('session', 'text', session), ('run', 'text', run),
            ('fence', 'bigint', fence), ('now', 'timestamptz', now)], 3))

    # -- runs, 0.4: an agent framework's state (latest and newest checkpoints, pending
    # writes, channel values, a whole run's deletion) ----------------------------------

    def latest_checkpoint(self, project: str, session: str, run: str) -> Optional[Checkpoint]:
        return self._maybe(Checkpoint, 'project', 'latest_checkpoint', [
            ('project', 'text', project), ('session', 'text', session), ('run', 'text', run)], 3)

    def newest_checkpoints(self, project: str, session: Optional[str] = None,
                           run: Optional[str] = None, metadata: Any = None,
                           before_session: Optional[str] = None,
                           before_run: Optional[str] = None,
                           before_checkpoint_id: Optional[str] = None,
                           lim: Optional[int] = None) -> List[Checkpoint]:
        return self._many(Checkpoint, 'project', 'newest_checkpoints', [
            ('project', 'text', project), ('session', 'text', session), ('run', 'text', run),
            ('metadata', 'jsonb', metadata), ('before_session', 'text', before_session),
            ('before_run', 'text', before_run),
            ('before_checkpoint_id', 'text', before_checkpoint_id), ('lim', 'integer', lim)], 1)

    def put_writes(self, project: str, session: str, run: str, checkpoint_id: str,
                   task_id: str, idx: Sequence[int], channels: Sequence[str],
                   vals: Sequence[Any], task_path: Optional[str] = None,
                   fence: Optional[int] = None) -> int:
        return int(self._scalar('put_writes', [
            ('project', 'text', project), ('session', 'text', session), ('run', 'text', run),
            ('checkpoint_id', 'text', checkpoint_id), ('task_id', 'text', task_id),
            ('idx', 'integer[]', idx), ('channels', 'text[]', channels),
            ('vals', 'jsonb[]', vals), ('task_path', 'text', task_path),
            ('fence', 'bigint', fence)], 8))

    def pending_writes(self, project: str, session: str, run: str,
                       checkpoint_id: str) -> List[RunWrite]:
        return self._many(RunWrite, 'task_id', 'pending_writes', [
            ('project', 'text', project), ('session', 'text', session), ('run', 'text', run),
            ('checkpoint_id', 'text', checkpoint_id)], 4)

    def put_values(self, project: str, session: str, run: str, channels: Sequence[str],
                   versions: Sequence[str], vals: Sequence[Any],
                   fence: Optional[int] = None) -> int:
        return int(self._scalar('put_values', [
            ('project', 'text', project), ('session', 'text', session), ('run', 'text', run),
            ('channels', 'text[]', channels), ('versions', 'text[]', versions),
            ('vals', 'jsonb[]', vals), ('fence', 'bigint', fence)], 6))

    def run_values(self, project: str, session: str, run: str, channels: Sequence[str],
                   versions: Sequence[str]) -> List[RunValue]:
        return self._many(RunValue, 'channel', 'run_values', [
            ('project', 'text', project), ('session', 'text', session), ('run', 'text', run),
            ('channels', 'text[]', channels), ('versions', 'text[]', versions)], 5)

    def delete_run(self, project: str, session: str, run: str, fence: Optional[int] = None,
                   now: Optional[datetime] = None) -> int:
        return int(self._scalar('delete_run', [
            ('project', 'text', project), ('session', 'text', session), ('run', 'text', run),
            ('fence', 'bigint', fence), ('now', 'timestamptz', now)], 3))

    # -- sweep, retention, notifications, counters -----------------------------------

    def set_retention(self, tasks: Optional[Interval] = None, tickets: Optional[Interval] = None,
                      runs: Optional[Interval] = None) -> None:
        self._void('set_retention', [('tasks', 'interval', tasks), ('tickets', 'interval', tickets),
                                     ('runs', 'interval', runs)], 0)

    def retention(self) -> Retention:
        names, rows = self._call('retention', 'row', [], 0)
        return build(Retention, names, rows[0])

    def channel(self) -> str:
        return str(self._scalar('channel'))

    def rotate_channel(self) -> str:
        return str(self._scalar('rotate_channel'))

    def stats(self) -> Dict[str, Any]:
        value: Dict[str, Any] = self._scalar('stats')
        return value

    def start_sweeper(self) -> int:
        return int(self._scalar('start_sweeper'))
