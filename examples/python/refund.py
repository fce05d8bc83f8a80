#!/usr/bin/env python3
"""An agent that asks a person before it pays a refund, and never polls.

    WORKLIST_TENANT=acme python3 refund.py [--holder NAME] [--ttl-seconds 30] PROJECT

It takes the runs of PROJECT from the queue (claim_next_run).  A run
starts with a checkpoint whose body is {"amount": ...}.  On its first step
the agent opens a task for the role finance and parks the run on it
(park_run), which gives the lease up: the agent goes on with other runs.
When a reviewer settles the task, the run is claimable again; the next
free agent takes it, reads the answer from the task, writes the checkpoint
"paid" or "refused", and the run is concluded.  Leases are renewed at half
the ttl; a step whose lease was lost (WL007) or whose run was concluded
under it (WL008) stops.  It wakes on the run notifications, and polls too.
"""
import argparse
import os
import socket
import sys

import worklist


def main():
    parser = argparse.ArgumentParser(description='Pay refunds once finance approves them.')
    parser.add_argument('project')
    parser.add_argument('--tenant', default=os.environ.get('WORKLIST_TENANT'))
    parser.add_argument('--holder', default='%s-refund-%d' % (socket.gethostname(), os.getpid()))
    parser.add_argument('--ttl-seconds', type=float, default=30)
    parser.add_argument('--poll-seconds', type=float, default=5)
    args = parser.parse_args()
    if not args.tenant:
        parser.error('no tenant: set WORKLIST_TENANT or pass --tenant')
    wl = worklist.Client(args.tenant, application_name='refund ' + args.holder)

    def log(line):
        print('%s %s' % (args.holder, line), flush=True)

    def step(ctx):
        run = ctx.run.run
        if not ctx.checkpoint.park_tasks:
            amount = ctx.checkpoint.body['amount']
            task = 'approve-' + run
            wl.open_task(task, run, ['finance'], run_id=run, payload={'amount': amount})
            ctx.park('asked', [task], body={'amount': amount})
            log('parked %s on %s' % (run, task))
            return
        task = ctx.tasks[0]
        approved = task.state == 'completed' and bool((task.decision or {}).get('approved'))
        outcome = 'paid' if approved else 'refused'
        ctx.write(outcome, {'amount': ctx.checkpoint.body['amount'], 'task': task.id,
                            'state': task.state, 'decided_by': task.decided_by})
        log('%s %s (%s by %s)' % (outcome, run, task.state, task.decided_by))
        # returning without parking concludes the run

    def on_event(name, info):
        if name in ('lost', 'failed', 'concluded'):
            log('%s %s%s' % (name, info['run'].run,
                             ': %s' % info['error'] if info.get('error') else ''))

    worker = worklist.RunWorker(wl, args.project, args.holder, step, ttl=args.ttl_seconds,
                                poll_seconds=args.poll_seconds, on_event=on_event)
    try:
        worker.run()
    except (worklist.InsufficientPrivilegeError, worklist.ConfigurationError) as err:
        log('configuration error: %s [%s]' % (err, err.sqlstate))
        return 78
    log('stopped')
    return 0


if __name__ == '__main__':
    sys.exit(main())
