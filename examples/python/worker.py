#!/usr/bin/env python3
"""A worker that claims the tasks of one worklist tenant and completes them,
until it is stopped.

    WORKLIST_TENANT=acme python3 worker.py [--actor NAME] [--roles a,b]
                                           [--poll-seconds 5] [--work-ms 0]

The loop is the worklist package's TaskWorker (clients/python): it listens
and polls, reconnects, recovers what this actor holds through held(), sends
a decision again after a lost connection instead of asking for it twice,
and on SIGTERM or SIGINT gives back the task whose review was cut short.
This file is the review and the log lines.
"""
import argparse
import os
import socket
import sys

import worklist

LINES = {
    'connected': 'connected', 'listening': 'listening', 'claimed': 'claimed {id}',
    'recovered': 'recovered {id}', 'resending': 'resending {id}', 'completed': 'completed {id}',
    'lost': 'lost {id}: {error}', 'released': 'released {id}', 'failed': 'failed {id}: {error}',
    'woken': 'woken by {why}', 'connection_lost': 'connection lost: {error}; reconnecting',
    'unfinished': 'stopped with the completion of {id} unfinished',
}


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

    def log(line):
        print('%s %s' % (args.actor, line), flush=True)

    def review(task, ctx):
        """Wait work-ms, then approve small amounts.  The decision depends
        on the task alone.  None when a stop request cut the review short:
        the worker gives the task back."""
        if ctx.sleep(args.work_ms / 1000.0) and args.work_ms > 0:
            return None
        return {'approved': float(task.payload.get('amount', 0)) <= 1000}

    def on_event(event, info):
        if event == 'stopped':
            log('handler calls %d' % worker.handler_calls)
            log('stopped')
        elif event == 'lost' and info['error'] is None:
            log('lost %s: settled by somebody else' % info['id'])
        else:
            log(LINES[event].format(**info))

    client = worklist.Client(args.tenant, application_name='worker %s' % args.actor)
    worker = worklist.TaskWorker(client, args.actor, args.roles.split(','), review,
                                 poll_seconds=args.poll_seconds, on_event=on_event)
    try:
        worker.run()
    except (worklist.InsufficientPrivilegeError, worklist.ConfigurationError) as err:
        log('configuration error: %s' % err)
        return 78
    except worklist.WorklistError as err:
        log('error: %s' % err)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
