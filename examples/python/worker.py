#!/usr/bin/env python3
"""A worker that claims the tasks of one worklist tenant and completes them,
until it is stopped.

    WORKLIST_TENANT=acme python3 worker.py [--actor NAME] [--roles a,b]
                                           [--poll-seconds 5] [--work-ms 0]

It listens on the tenant's notification channel and also polls, because a
notification can be lost (a restart, a full queue) while the work it
announced is not.  After every (re)connect it first finishes the tasks it
still holds (worklist.held), so that no claim is stranded by a lost
connection.  On SIGTERM or SIGINT it finishes the task in hand (or gives
the claim back when the work is cut short), stops listening and
disconnects.  See README.md for the exit statuses and the errors.
"""
import argparse
import json
import os
import socket
import sys
import time

import psycopg2
from psycopg2 import sql

from worklist import (EXIT_CONFIG, EXIT_FATAL, Stopper, call, classify, connect,
                      describe)


class Worker:
    def __init__(self, args):
        self.tenant = args.tenant
        self.actor = args.actor
        self.roles = args.roles.split(',')
        self.poll_seconds = args.poll_seconds
        self.work_seconds = args.work_ms / 1000.0
        self.stopper = Stopper()
        self.channel = None
        # The call in flight when the connection broke (a completion or a
        # release): it may have committed without its answer reaching us.
        # recover() settles it on the next connection.
        self.unfinished = None
        self.resubscribe = False

    def log(self, message):
        print('%s %s' % (self.actor, message), flush=True)

    def run(self):
        failures = 0
        while True:
            conn = None
            try:
                conn = connect(self.tenant, 'worker %s' % self.actor, self.stopper,
                               self.log, failures)
                if conn is None:
                    break  # stopped while reconnecting
                self.log('connected')
                failures = 0
                self.serve(conn)
                break
            except psycopg2.Error as err:
                what = classify(err)
                if what == 'reconnect':
                    failures += 1
                    self.log('connection lost: %s; reconnecting' % describe(err))
                    continue
                self.log('%s: %s' % ('configuration error' if what == 'config' else 'error',
                                     describe(err)))
                return EXIT_CONFIG if what == 'config' else EXIT_FATAL
            finally:
                if conn is not None:
                    conn.close()
        if self.unfinished:
            self.log('stopped with %s of %s unfinished' % self.unfinished[:2])
        self.log('stopped')
        return 0

    def subscribe(self, conn):
        """LISTEN on the tenant's channel.  Subscribe before looking at the
        queue, so that nothing opened in between goes unnoticed."""
        if self.channel:
            call(conn, sql.SQL('UNLISTEN {}').format(sql.Identifier(self.channel)))
        [(self.channel,)] = call(conn, 'SELECT worklist.channel()')
        call(conn, sql.SQL('LISTEN {}').format(sql.Identifier(self.channel)))
        self.resubscribe = False
        self.log('listening')

    def serve(self, conn):
        self.channel = None
        self.subscribe(conn)
        self.recover(conn)
        while not self.stopper.requested:
            if self.resubscribe:
                self.subscribe(conn)
            rows = call(conn, 'SELECT id, payload FROM worklist.claim_next(%s, %s)'
                              ' WHERE id IS NOT NULL', (self.actor, self.roles))
            if rows:
                task_id, payload = rows[0]
                self.log('claimed %s' % task_id)
                self.handle(conn, task_id, payload)
                continue
            why = self.wait_for_work(conn)
            if why in ('notification', 'poll'):
                self.log('woken by %s' % why)
        call(conn, 'UNLISTEN *')

    def worth_a_look(self, conn):
        """Reads the notifications received so far.  A payload counts what
        changed since the previous one, e.g. {"task": {"opened": 3,
        "claimed": 1}}.  Only tasks that became claimable are worth a look;
        {"rotated": true} means the channel was replaced."""
        wake = False
        for note in conn.notifies:
            try:
                payload = json.loads(note.payload)
            except ValueError:
                continue
            if payload.get('rotated'):
                self.resubscribe = wake = True
            task = payload.get('task', {})
            if task.get('opened') or task.get('released') or task.get('escalated'):
                wake = True
        conn.notifies.clear()
        return wake

    def wait_for_work(self, conn):
        """Returns 'notification', 'poll' or 'stop'.  A broken connection
        raises from conn.poll()."""
        deadline = time.monotonic() + self.poll_seconds
        while not self.stopper.requested:
            if self.worth_a_look(conn):
                return 'notification'
            left = deadline - time.monotonic()
            if left <= 0:
                return 'poll'
            if self.stopper.wait(left, conn):
                conn.poll()
        return 'stop'

    def review(self, task_id, payload):
        """The review itself.  Here: wait work-ms, then approve small
        amounts.  The decision depends on the task alone, so a retried
        completion sends the same one.  Returns None when a stop request cut
        the work short."""
        self.stopper.sleep(self.work_seconds)
        if self.stopper.requested and self.work_seconds > 0:
            return None
        return {'approved': float(payload.get('amount', 0)) <= 1000}

    def handle(self, conn, task_id, payload):
        """The review, then the completion, or the release when a stop
        request cut the review short."""
        decision = self.review(task_id, payload)
        if decision is None:
            self.release(conn, task_id)
        else:
            self.complete(conn, task_id, decision)

    def complete(self, conn, task_id, decision):
        self.unfinished = ('complete', task_id, decision)
        try:
            [(settled,)] = call(conn, 'SELECT worklist.complete(%s, %s, %s)',
                                (task_id, self.actor, json.dumps(decision)))
            # True: settled by us -- by this call, or by an earlier one whose
            # answer was lost (the same actor and decision).  False:
            # somebody else settled it (a deadline passed, a lead decided).
            self.log(('completed %s' if settled else 'lost %s: settled by somebody else')
                     % task_id)
        except psycopg2.Error as err:
            # The claim was taken from us (a lead's take_over, a claim
            # timeout), or the task was erased: nothing left to do with it.
            if err.pgcode not in ('WL006', 'WL001', 'WL002'):
                raise
            self.log('lost %s: %s' % (task_id, describe(err)))
        self.unfinished = None

    def release(self, conn, task_id):
        self.unfinished = ('release', task_id, None)
        try:
            call(conn, 'SELECT worklist.release(%s, %s)', (task_id, self.actor))
            self.log('released %s' % task_id)
        except psycopg2.Error as err:
            # WL006: not ours any more, or an earlier release already went
            # through.
            if err.pgcode not in ('WL006', 'WL001'):
                raise
            self.log('released %s (%s)' % (task_id, err.pgcode))
        self.unfinished = None

    def recover(self, conn):
        """After every (re)connect, before any new work: finish what this
        actor holds.  held() is the database's word on it: a task whose
        review or completion the broken connection cut off, a claim whose
        answer was lost with it.  The call in flight when the connection
        broke, if its task is not among them, went through or was
        overtaken: sending it again tells which (a retried completion
        answers true when it was ours)."""
        tasks = call(conn, 'SELECT id, payload FROM worklist.held(%s)', (self.actor,))
        if self.unfinished and self.unfinished[1] not in [t[0] for t in tasks]:
            op, task_id, decision = self.unfinished
            if op == 'complete':
                self.complete(conn, task_id, decision)
            else:
                self.release(conn, task_id)
        self.unfinished = None
        for task_id, payload in tasks:
            self.log('recovered %s' % task_id)
            self.handle(conn, task_id, payload)


def main():
    parser = argparse.ArgumentParser(description='Claim and complete worklist tasks.')
    parser.add_argument('--tenant', default=os.environ.get('WORKLIST_TENANT'))
    parser.add_argument('--actor', default='%s-worker-%d' % (socket.gethostname(), os.getpid()))
    parser.add_argument('--roles', default='reviewer')
    parser.add_argument('--poll-seconds', type=float, default=5)
    parser.add_argument('--work-ms', type=float, default=0)
    args = parser.parse_args()
    if not args.tenant:
        parser.error('set WORKLIST_TENANT or pass --tenant')
    return Worker(args).run()


if __name__ == '__main__':
    sys.exit(main())
