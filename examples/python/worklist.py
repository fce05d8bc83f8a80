"""What worker.py and agent.py share: a connection that sets the tenant,
reconnects with backoff, and tells what each error means.

The connection comes from the standard libpq environment variables
(PGHOST, PGPORT, PGDATABASE, PGUSER, PGPASSWORD), which libpq reads by
itself.
"""
import os
import random
import select
import signal
import time

import psycopg2

EXIT_FATAL = 1        # an error no retry can fix (a bug, a bad argument)
EXIT_CONFIG = 78      # this login may not work in this tenant, or no such database
EXIT_LEASE_LOST = 75  # agent: another holder has the run


def classify(err):
    """What to do about an error.

    Errors from the server carry a SQLSTATE (err.pgcode); errors without
    one come from the socket (refused, reset, closed).
      'retry'      the transaction lost a race: run the same call again
      'reconnect'  the connection is gone or the server is restarting
      'config'     fix the set-up (binding, role, database); retrying won't help
      'fatal'      a bug or a bad argument
    The extension's own refusals (WL001..WL007) are answers, not failures:
    each program handles the ones its calls can meet before asking here.
    """
    if not isinstance(err, psycopg2.Error):
        return 'fatal'
    code = err.pgcode
    if code is None:
        # No SQLSTATE: libpq lost the connection ("server closed the
        # connection unexpectedly", "connection already closed"), unless
        # psycopg2 refused the call itself (a bug).
        if isinstance(err, psycopg2.ProgrammingError):
            return 'fatal'
        return 'reconnect'
    if code in ('40001', '40P01'):
        return 'retry'
    if code.startswith('08') or code in ('57P01', '57P02', '57P03', '53300'):
        return 'reconnect'
    # 42501: the login reaches no binding of the tenant (closed tenancy);
    # 28xxx: authentication; 3D000: no such database; 3F000/42883/55000:
    # the extension is missing or older than these calls.
    if code == '42501' or code.startswith('28') or code in ('3D000', '3F000', '42883', '55000'):
        return 'config'
    return 'fatal'


def describe(err):
    """One line: the message, the SQLSTATE and the DETAIL, when there are."""
    diag = getattr(err, 'diag', None)
    message = (diag.message_primary if diag and diag.message_primary else str(err)).strip()
    message = ' '.join(message.split())
    if getattr(err, 'pgcode', None):
        message += ' [%s]' % err.pgcode
    if diag and diag.message_detail:
        message += ' (%s)' % diag.message_detail
    return message


class Stopper:
    """A stop request from SIGTERM or SIGINT, and sleeps that it ends.

    The signal handler only sets a flag; the wakeup pipe makes a select()
    in progress return at once.
    """

    def __init__(self):
        self.requested = False
        self.fd, write_fd = os.pipe()
        os.set_blocking(self.fd, False)
        os.set_blocking(write_fd, False)
        signal.set_wakeup_fd(write_fd)
        signal.signal(signal.SIGTERM, self._request)
        signal.signal(signal.SIGINT, self._request)

    def _request(self, signum, frame):
        self.requested = True

    def wait(self, seconds, conn=None):
        """Sleeps up to seconds; returns early on a stop request, or when
        conn (if given) has something to read.  Returns True if conn has."""
        readers = [self.fd] + ([conn] if conn is not None else [])
        ready, _, _ = select.select(readers, [], [], max(seconds, 0))
        if self.fd in ready:
            try:
                os.read(self.fd, 512)
            except BlockingIOError:
                pass
        return conn is not None and conn in ready

    def sleep(self, seconds):
        deadline = time.monotonic() + seconds
        while not self.requested and time.monotonic() < deadline:
            self.wait(deadline - time.monotonic())


def backoff(failures):
    """250 ms, 500 ms, 1 s, ... up to 10 s, each with up to half of it
    shaved off at random so that many clients do not come back in step."""
    seconds = min(10.0, 0.25 * 2 ** min(failures - 1, 10))
    return seconds * (0.5 + random.random() / 2)


def connect(tenant, application_name, stopper, log, failures=0):
    """Opens a connection in autocommit mode and sets worklist.tenant for
    the session.  A new connection starts with the default tenant, so this
    runs after every reconnect.  Retries with backoff while the server
    cannot be reached; returns None if a stop is requested meanwhile.
    failures counts the failed attempts in a row (and broken sessions) that
    precede this call."""
    while True:
        if failures:
            stopper.sleep(backoff(failures))
        if stopper.requested:
            return None
        try:
            conn = psycopg2.connect('', application_name=application_name)
            conn.autocommit = True
            with conn.cursor() as cur:
                cur.execute("SELECT pg_catalog.set_config('worklist.tenant', %s, false)", (tenant,))
            return conn
        except psycopg2.Error as err:
            if classify(err) != 'reconnect':
                raise
            failures += 1
            log('cannot connect: %s; retrying' % describe(err))


def call(conn, query, args=()):
    """Runs one statement and returns its rows, again after a serialization
    failure or deadlock (40001, 40P01).  Every verb is one statement in its
    own transaction (autocommit), so running it again is safe."""
    attempt = 1
    while True:
        try:
            with conn.cursor() as cur:
                cur.execute(query, args)
                return cur.fetchall() if cur.description else []
        except psycopg2.Error as err:
            if classify(err) != 'retry' or attempt >= 5:
                raise
            time.sleep(0.02 * attempt * (1 + random.random()))
            attempt += 1
