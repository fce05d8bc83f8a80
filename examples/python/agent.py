#!/usr/bin/env python3
"""An agent that carries one run through its steps, writing a checkpoint
after each under a lease, so that a crash loses at most the step in hand and
two agents never both write to the run.

    WORKLIST_TENANT=acme python3 agent.py [--holder NAME] [--steps 10]
        [--ttl-seconds 30] [--step-ms 1000] [--wait-seconds 0]
        PROJECT SESSION RUN

The lease is the worklist package's RunLease: claim_run, renewed after half
of the ttl, each checkpoint written with the fence in hand.  Once another
holder has claimed the run, a write is refused (WL007 stale_fence) and this
agent stops at once.  It resumes after the run's newest checkpoint, so a
second agent picks up where the first left off.
"""
import argparse
import os
import socket
import sys
import time

import worklist


class LeaseLost(Exception):
    pass


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
    address = (args.project, args.session, args.run)
    started = time.monotonic()

    def log(line):
        print('%s %s' % (args.holder, line), flush=True)

    client = worklist.Client(args.tenant, application_name='agent %s' % args.holder,
                             on_connect=lambda conn: log('connected'))
    lease = worklist.RunLease(client, *address, holder=args.holder, ttl=args.ttl_seconds)
    stopper = worklist.Stopper()

    def take():
        """Takes the lease (waiting up to wait-seconds while another holder
        has it), then resumes after the newest checkpoint, whoever wrote it."""
        while not lease.claim():
            if time.monotonic() - started >= args.wait_seconds:
                raise LeaseLost('the run is held by another holder')
            time.sleep(0.2)
        log('claimed fence=%d' % lease.fence)
        return max([0] + [c.body['step'] for c in client.list_checkpoints(*address)]) + 1

    def work():
        step = None  # None: (re)connected, the lease must be taken first
        failures = 0
        while True:
            try:
                if step is None:
                    step = take()
                elif lease.due:
                    if not lease.claim():
                        raise LeaseLost('another holder has the run')
                    log('renewed fence=%d' % lease.fence)
                failures = 0
                if stopper.requested or step > args.steps:
                    lease.release()
                    log('released fence=%d' % lease.fence)
                    log('stopped' if stopper.requested else 'done: %d steps' % args.steps)
                    return 0
                if stopper.sleep(args.step_ms / 1000.0):
                    continue
                checkpoint_id = 'step-%04d' % step
                # Retried after a reconnect, a write overwrites the same
                # checkpoint.  The fence goes into the body as a string, like
                # any bigint a JSON reader might turn into a float.
                lease.write(checkpoint_id, {'step': step, 'holder': args.holder,
                                            'fence': str(lease.fence)})
                log('checkpoint %s fence=%d' % (checkpoint_id, lease.fence))
                step += 1
            except worklist.StaleFenceError as err:
                raise LeaseLost('stale fence (WL007): %s' % err.detail)
            except worklist.TransientError as err:
                failures += 1
                log('connection lost: %s; reconnecting' % err)
                time.sleep(worklist.backoff(failures))
                step = None  # a renewal in flight may have committed and moved the fence

    with stopper.on_signals():
        try:
            return work()
        except LeaseLost as lost:
            log('lease lost: %s; giving up' % lost)
            return 75
        except (worklist.InsufficientPrivilegeError, worklist.ConfigurationError) as err:
            log('configuration error: %s' % err)
            return 78
        except worklist.WorklistError as err:
            log('error: %s' % err)
            return 1


if __name__ == '__main__':
    sys.exit(main())
