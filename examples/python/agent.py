#!/usr/bin/env python3
"""An agent that carries one run through its steps, writing a checkpoint
after each under a lease, so that a crash loses at most the step in hand and
two agents never both write to the run.

    WORKLIST_TENANT=acme python3 agent.py [--holder NAME] [--steps 10]
        [--ttl-seconds 30] [--step-ms 1000] [--wait-seconds 0]
        PROJECT SESSION RUN

The lease is taken with claim_run and renewed by claiming again with the
same holder when half of it has passed.  Every claim returns a new fence;
each checkpoint is written with the fence of the lease in hand, and the
server refuses it (WL007 stale_fence) once another holder has claimed the
run since: then this agent has lost the run and stops at once.  The agent
resumes after the run's newest checkpoint, so a second agent picks up where
the first left off.
"""
import argparse
import json
import os
import socket
import sys
import time

import psycopg2

from worklist import (EXIT_CONFIG, EXIT_FATAL, EXIT_LEASE_LOST, Stopper, call,
                      classify, connect, describe)


class LeaseLost(Exception):
    pass


class Agent:
    def __init__(self, args):
        self.tenant = args.tenant
        self.address = (args.project, args.session, args.run)
        self.holder = args.holder
        self.steps = args.steps
        self.ttl = args.ttl_seconds
        self.step_seconds = args.step_ms / 1000.0
        self.wait_seconds = args.wait_seconds
        self.stopper = Stopper()
        self.fence = None       # the fence of the lease in hand
        self.claimed_at = None  # time.monotonic() when it was claimed
        self.ever_held = False  # did this agent hold the run at some point?
        self.next_step = 1
        self.started = time.monotonic()

    def log(self, message):
        print('%s %s' % (self.holder, message), flush=True)

    def run(self):
        failures = 0
        while True:
            conn = None
            try:
                conn = connect(self.tenant, 'agent %s' % self.holder, self.stopper,
                               self.log, failures)
                if conn is None:
                    self.log('stopped')
                    return 0
                self.log('connected')
                failures = 0
                return self.work(conn)
            except LeaseLost as lost:
                self.log('lease lost: %s; giving up' % lost)
                return EXIT_LEASE_LOST
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

    def claim(self, conn):
        """Takes or renews the lease.  NULL from claim_run means somebody
        else holds an unexpired lease on the run."""
        at = time.monotonic()
        rows = call(conn, 'SELECT fence FROM worklist.claim_run(%s, %s, %s, %s,'
                          ' make_interval(secs => %s)) WHERE fence IS NOT NULL',
                    self.address + (self.holder, self.ttl))
        if not rows:
            return False
        first = self.fence is None
        self.fence, self.claimed_at = rows[0][0], at
        self.ever_held = True
        self.log('%s fence=%d' % ('claimed' if first else 'renewed', self.fence))
        if first:
            # Resume after the newest checkpoint, whoever wrote it.
            [(done,)] = call(conn, "SELECT coalesce(max((body->>'step')::int), 0)"
                                   ' FROM worklist.list_checkpoints(%s, %s, %s)', self.address)
            self.next_step = done + 1
        return True

    def ensure_lease(self, conn):
        """The lease in hand, taken or renewed as needed."""
        if self.fence is not None and time.monotonic() - self.claimed_at < self.ttl / 2:
            return
        while not self.claim(conn):
            if self.ever_held:
                raise LeaseLost('another holder has the run')
            if time.monotonic() - self.started >= self.wait_seconds:
                raise LeaseLost('the run is held by another holder')
            self.stopper.sleep(0.2)
            if self.stopper.requested:
                return

    def write_checkpoint(self, conn, step):
        checkpoint_id = 'step-%04d' % step
        # The fence goes into the body as a string, like any bigint that a
        # JSON reader might turn into a floating-point number.
        body = {'step': step, 'holder': self.holder, 'fence': str(self.fence)}
        try:
            call(conn, 'SELECT worklist.write_checkpoint(%s, %s, %s, %s, %s, fence => %s)',
                 self.address + (checkpoint_id, json.dumps(body), self.fence))
        except psycopg2.Error as err:
            if err.pgcode == 'WL007':
                raise LeaseLost('stale fence (WL007): %s' % describe(err))
            raise
        self.log('checkpoint %s fence=%d' % (checkpoint_id, self.fence))

    def release(self, conn):
        if self.fence is None:
            return
        # With a stale fence this does nothing: it never hands away a run
        # that somebody else holds now.
        call(conn, 'SELECT worklist.release_run(%s, %s, %s, %s)', self.address + (self.fence,))
        self.log('released fence=%d' % self.fence)

    def do_step(self):
        """The step itself.  Here: wait step-ms.  Returns False when a stop
        request cut it short."""
        self.stopper.sleep(self.step_seconds)
        return not self.stopper.requested

    def work(self, conn):
        # A renewal in flight when the connection broke may have committed
        # and moved the fence: claim again before writing anything.
        self.fence = None
        while True:
            self.ensure_lease(conn)
            if self.stopper.requested:
                self.release(conn)
                self.log('stopped')
                return 0
            if self.next_step > self.steps:
                self.release(conn)
                self.log('done: %d steps' % self.steps)
                return 0
            if not self.do_step():
                continue
            # Retried after a reconnect, a write overwrites the same
            # checkpoint.
            self.write_checkpoint(conn, self.next_step)
            self.next_step += 1


def main():
    parser = argparse.ArgumentParser(description='Carry a worklist run through its steps.')
    parser.add_argument('project')
    parser.add_argument('session')
    parser.add_argument('run')
    parser.add_argument('--tenant', default=os.environ.get('WORKLIST_TENANT'))
    parser.add_argument('--holder', default='%s-agent-%d' % (socket.gethostname(), os.getpid()))
    parser.add_argument('--steps', type=int, default=10)
    parser.add_argument('--ttl-seconds', type=float, default=30)
    parser.add_argument('--step-ms', type=float, default=1000)
    parser.add_argument('--wait-seconds', type=float, default=0)
    args = parser.parse_args()
    if not args.tenant:
        parser.error('set WORKLIST_TENANT or pass --tenant')
    return Agent(args).run()


if __name__ == '__main__':
    sys.exit(main())
