"""Errors by SQLSTATE.

Every error a verb raises reaches the caller as an instance of one of the
classes below, chosen by its SQLSTATE, with the server's message, DETAIL
and HINT, and the facts of the DETAIL as attributes (the holder, the
fences).  The driver's own error is the ``__cause__``.

Transient errors (the connection was lost, the server is restarting or
full, a serialization failure or deadlock) derive from TransientError;
every other error is permanent: sending the same call again gets the same
answer.
"""
from __future__ import annotations

import re
from typing import Dict, Optional, Type


class WorklistError(Exception):
    """Base of every error of this package."""

    transient = False

    def __init__(self, message: str, sqlstate: Optional[str] = None,
                 detail: Optional[str] = None, hint: Optional[str] = None) -> None:
        super().__init__(message)
        self.message = message
        self.sqlstate = sqlstate
        self.detail = detail
        self.hint = hint
        self._facts()

    def _facts(self) -> None:
        """Reads the facts of the message and DETAIL into attributes."""

    @property
    def pgcode(self) -> Optional[str]:
        """The SQLSTATE, under psycopg2's name for it."""
        return self.sqlstate

    def __str__(self) -> str:
        text = self.message
        if self.sqlstate:
            text += ' [%s]' % self.sqlstate
        if self.detail:
            text += ' (%s)' % self.detail
        return text


def _match(pattern: str, text: Optional[str]) -> Optional['re.Match[str]']:
    return re.match(pattern, text or '', re.S)


def _held_by(detail: Optional[str]) -> Optional[str]:
    m = _match(r'It is held by "(.*)"\.$', detail)
    return m.group(1) if m else None


def _argument(message: str) -> Optional[str]:
    m = re.match(r'argument "([^"]*)"', message)
    return m.group(1) if m else None


class NotFoundError(WorklistError):
    """WL001: the task or ticket named does not exist in this tenant."""

    def _facts(self) -> None:
        m = _match(r'(\w+) "(.*)" does not exist$', self.message)
        self.kind = m.group(1) if m else None
        self.id = m.group(2) if m else None


class ExcludedError(WorklistError):
    """WL002: the actor is barred from the task (four eyes)."""

    def _facts(self) -> None:
        m = _match(r'actor "(.*)" is excluded from task "(.*)"$', self.message)
        self.actor = m.group(1) if m else None
        self.id = m.group(2) if m else None


class WrongRoleError(WorklistError):
    """WL003: none of the roles given meets the task's audience."""

    def _facts(self) -> None:
        m = _match(r'actor "(.*)" has no role in the audience of task "(.*)"$', self.message)
        self.actor = m.group(1) if m else None
        self.id = m.group(2) if m else None


class NotPendingError(WorklistError):
    """WL004: the task is settled; ``state`` is its state."""

    def _facts(self) -> None:
        m = _match(r'task "(.*)" is not pending$', self.message)
        self.id = m.group(1) if m else None
        d = _match(r'The task is (\w+)\.$', self.detail)
        self.state = d.group(1) if d else None


class AlreadyClaimedError(WorklistError):
    """WL005: somebody else holds the task; ``holder`` names it."""

    def _facts(self) -> None:
        m = _match(r'task "(.*)" is already claimed$', self.message)
        self.id = m.group(1) if m else None
        self.holder = _held_by(self.detail)


class NotHeldError(WorklistError):
    """WL006: ``actor`` does not hold the task; ``holder`` does (None: nobody)."""

    def _facts(self) -> None:
        m = _match(r'task "(.*)" is not held by "(.*)"$', self.message)
        self.id = m.group(1) if m else None
        self.actor = m.group(2) if m else None
        self.holder = _held_by(self.detail)


class StaleFenceError(WorklistError):
    """WL007: a fenced write whose fence is not the run's current one.

    ``fence`` is the write's, ``current_fence`` the run's (None: it has none).
    """

    def _facts(self) -> None:
        m = _match(r'stale fence for run "(.*)"$', self.message)
        self.run = m.group(1) if m else None
        f = re.search(r'carries fence (-?\d+)', self.detail or '')
        c = re.search(r'current fence is (-?\d+)', self.detail or '')
        self.fence = int(f.group(1)) if f else None
        self.current_fence = int(c.group(1)) if c else None


class RunConcludedError(WorklistError):
    """WL008 (0.4): a write, park or claim of a run that conclude_run concluded."""

    def _facts(self) -> None:
        m = re.search(r'run "(.*)"', self.message, re.S)
        self.run = m.group(1) if m else None


class InsufficientPrivilegeError(WorklistError):
    """42501: the login may not reach the tenant, or a member named another
    actor, a role it is not in, or moved a write verb's clock.  ``argument``
    names the argument refused, ``tenant`` the tenant (either None)."""

    def _facts(self) -> None:
        self.argument = _argument(self.message)
        t = re.search(r'tenant "(.*)"$', self.message, re.S)
        self.tenant = t.group(1) if t else None


class InvalidArgumentError(WorklistError):
    """22023: a bad argument; ``argument`` names it."""

    def _facts(self) -> None:
        self.argument = _argument(self.message)


class LimitExceededError(WorklistError):
    """54000: a document larger than worklist.max_document_size (or another
    limit); ``size`` and ``limit`` in bytes when the DETAIL says."""

    def _facts(self) -> None:
        self.argument = _argument(self.message)
        d = re.search(r'takes (\d+) bytes; worklist\.max_document_size is (\d+) bytes',
                      self.detail or '')
        self.size = int(d.group(1)) if d else None
        self.limit = int(d.group(2)) if d else None


class ConfigurationError(WorklistError):
    """The login, the database or the extension is not what the calls need:
    authentication (28xxx), no such database (3D000), the extension missing
    or older than the call (3F000, 42883, 55000)."""


class DatabaseError(WorklistError):
    """Any other error the server raised: a bug in the caller, most likely."""


class TransientError(WorklistError):
    """Sending the call again may succeed."""

    transient = True


class ConnectionLostError(TransientError):
    """The connection is gone or could not be made (08xxx, 57P01, 57P02,
    57P03, 53300, or no SQLSTATE at all).  A call in flight may or may not
    have committed: the server knows (held(), a retried complete)."""


class SerializationError(TransientError):
    """40001, 40P01: the transaction was rolled back; run it again."""


_BY_CODE: Dict[str, Type[WorklistError]] = {
    'WL001': NotFoundError,
    'WL002': ExcludedError,
    'WL003': WrongRoleError,
    'WL004': NotPendingError,
    'WL005': AlreadyClaimedError,
    'WL006': NotHeldError,
    'WL007': StaleFenceError,
    'WL008': RunConcludedError,
    '42501': InsufficientPrivilegeError,
    '22023': InvalidArgumentError,
    '54000': LimitExceededError,
    '40001': SerializationError,
    '40P01': SerializationError,
    '57P01': ConnectionLostError,
    '57P02': ConnectionLostError,
    '57P03': ConnectionLostError,
    '53300': ConnectionLostError,
    '3D000': ConfigurationError,
    '3F000': ConfigurationError,
    '42883': ConfigurationError,
    '55000': ConfigurationError,
}


def class_for(sqlstate: str) -> Type[WorklistError]:
    """The class of the errors with this SQLSTATE."""
    if sqlstate in _BY_CODE:
        return _BY_CODE[sqlstate]
    if sqlstate.startswith('08'):
        return ConnectionLostError
    if sqlstate.startswith('28'):
        return ConfigurationError
    return DatabaseError


def from_driver(err: BaseException) -> BaseException:
    """The error a verb raises for what psycopg2 raised.  An error of the
    program itself (psycopg2's ProgrammingError without a SQLSTATE: a bad
    query or a closed cursor) is returned unchanged."""
    import psycopg2

    if isinstance(err, WorklistError) or not isinstance(err, psycopg2.Error):
        return err
    code = err.pgcode
    diag = err.diag
    if code:
        message = str(diag.message_primary or err).strip()
        return class_for(code)(message, code, diag.message_detail, diag.message_hint)
    if isinstance(err, psycopg2.ProgrammingError):
        program_error: BaseException = err
        return program_error
    # no SQLSTATE: libpq lost the connection, or could not make it
    message = ' '.join(str(err).split()) or type(err).__name__
    return ConnectionLostError(message)
