#!/usr/bin/env node
// worker.js — claims the tasks of one worklist tenant and completes them,
// until it is stopped.
//
//   WORKLIST_TENANT=acme node worker.js [--actor NAME] [--roles a,b]
//                                      [--poll-seconds 5] [--work-ms 0]
//
// The loop is the worklist package's TaskWorker (clients/node): it
// listens and polls, reconnects, recovers what this actor holds through
// held(), sends a decision again after a lost connection instead of asking
// for it twice, and on SIGTERM or SIGINT gives back the task whose review
// was cut short.  This file is the review and the log lines.
import os from 'node:os';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigurationError, InsufficientPrivilegeError, TaskWorker, Worklist } from 'worklist';

const { values: opt } = parseArgs({
  options: {
    tenant: { type: 'string', default: process.env.WORKLIST_TENANT },
    actor: { type: 'string', default: `${os.hostname()}-worker-${process.pid}` },
    roles: { type: 'string', default: 'reviewer' },
    'poll-seconds': { type: 'string', default: '5' },
    'work-ms': { type: 'string', default: '0' },
  },
});
if (!opt.tenant) {
  console.error('worker.js: set WORKLIST_TENANT or pass --tenant');
  process.exit(2);
}
const { actor } = opt;
const workMs = Number(opt['work-ms']);
const log = (line) => console.log(`${actor} ${line}`);

// The review: wait work-ms, then approve small amounts.  The decision
// depends on the task alone.  Nothing is returned when a stop request cut
// the review short: the worker gives the task back.
async function review(task, { signal }) {
  try {
    await sleep(workMs, null, { signal });
  } catch {
    return null;
  }
  return { approved: Number(task.payload.amount || 0) <= 1000 };
}

const lines = {
  connected: () => 'connected',
  listening: () => 'listening',
  claimed: (e) => `claimed ${e.id}`,
  recovered: (e) => `recovered ${e.id}`,
  resending: (e) => `resending ${e.id}`,
  completed: (e) => `completed ${e.id}`,
  lost: (e) => `lost ${e.id}: ${e.error ? e.error.message : 'settled by somebody else'}`,
  released: (e) => `released ${e.id}`,
  failed: (e) => `failed ${e.id}: ${e.error.message}`,
  woken: (e) => `woken by ${e.why}`,
  connection_lost: (e) => `connection lost: ${e.error.message}; reconnecting`,
  unfinished: (e) => `stopped with the completion of ${e.id} unfinished`,
  abandoned: (e) => `abandoned ${e.id}`,
  stopped: () => `handler calls ${worker.handlerCalls}\n${actor} stopped`,
};

const wl = new Worklist({ tenant: opt.tenant, application_name: `worker ${actor}` });
const worker = new TaskWorker(wl, {
  actor,
  roles: opt.roles.split(','),
  pollMs: Number(opt['poll-seconds']) * 1000,
  handler: review,
  onEvent: (event, e) => log(lines[event](e)),
});
try {
  await worker.run();
} catch (err) {
  const config = err instanceof InsufficientPrivilegeError || err instanceof ConfigurationError;
  log(`${config ? 'configuration error' : 'error'}: ${err.message} [${err.code}]`);
  process.exitCode = config ? 78 : 1;
}
await wl.end();
