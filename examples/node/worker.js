#!/usr/bin/env node
// worker.js — a worker that claims the tasks of one worklist tenant and
// completes them, until it is stopped.
//
//   WORKLIST_TENANT=acme node worker.js [--actor NAME] [--roles a,b]
//                                      [--poll-seconds 5] [--work-ms 0]
//
// It listens on the tenant's notification channel and also polls, because
// a notification can be lost (a restart, a full queue) while the work it
// announced is not.  After every (re)connect it first finishes the tasks it
// still holds (worklist.held), so that no claim is stranded by a lost
// connection.  On SIGTERM or SIGINT it finishes the task in hand (or gives
// the claim back when the work is cut short), stops listening and
// disconnects.  See README.md for the exit statuses and the errors.
'use strict';

const os = require('node:os');
const { parseArgs } = require('node:util');
const {
  EXIT_CONFIG, EXIT_FATAL, Stopper, call, classify, connect, describe,
} = require('./worklist');

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
const actor = opt.actor;
const roles = opt.roles.split(',');
const pollMs = Number(opt['poll-seconds']) * 1000;
const workMs = Number(opt['work-ms']);

const stopper = new Stopper();
process.on('SIGTERM', () => stopper.request());
process.on('SIGINT', () => stopper.request());

function log(message) {
  console.log(`${actor} ${message}`);
}

// The call in flight when the connection broke (a completion or a
// release): it may have committed without its answer reaching us.
// recover() settles it on the next connection.
let unfinished = null;

// Set by notifications that announce claimable work; `wake` ends a wait.
let wakePending = false;
let resubscribe = false;
let wake = null;

// A payload counts what changed since the previous one, e.g.
// {"task": {"opened": 3, "claimed": 1}}.  Only tasks that became claimable
// are worth a look; {"rotated": true} means the channel was replaced.
function onNotification(msg) {
  let payload;
  try {
    payload = JSON.parse(msg.payload);
  } catch {
    return;
  }
  if (payload.rotated) resubscribe = true;
  const task = payload.task || {};
  if (task.opened || task.released || task.escalated) wakePending = true;
  if ((wakePending || resubscribe) && wake) wake('notification');
}

let channel = null;

// LISTEN on the tenant's channel.  Subscribe before looking at the queue,
// so that nothing opened in between goes unnoticed.
async function subscribe(client) {
  if (channel) await client.query(`UNLISTEN ${client.escapeIdentifier(channel)}`);
  [{ channel }] = await call(client, 'SELECT worklist.channel() AS channel');
  await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
  resubscribe = false;
  log('listening');
}

// The review itself.  Here: wait work-ms, then approve small amounts.  The
// decision depends on the task alone, so a retried completion sends the
// same one.  Returns null when a stop request cut the work short.
async function review(task) {
  await stopper.sleep(workMs);
  if (stopper.requested && workMs > 0) return null;
  const amount = Number(task.payload.amount || 0);
  return { approved: amount <= 1000 };
}

async function complete(client, id, decision) {
  unfinished = { op: 'complete', id, decision };
  try {
    const [{ settled }] = await call(client,
      'SELECT worklist.complete($1, $2, $3) AS settled', [id, actor, decision]);
    // true: settled by us -- by this call, or by an earlier one whose answer
    // was lost (the same actor and decision).  false: somebody else settled
    // it (a deadline passed, a lead decided).
    log(settled ? `completed ${id}` : `lost ${id}: settled by somebody else`);
  } catch (err) {
    // The claim was taken from us (a lead's take_over, a claim timeout),
    // or the task was erased: nothing left to do with it.
    if (err.code === 'WL006' || err.code === 'WL001' || err.code === 'WL002') {
      log(`lost ${id}: ${describe(err)}`);
    } else {
      throw err;
    }
  }
  unfinished = null;
}

async function release(client, id) {
  unfinished = { op: 'release', id };
  try {
    await call(client, 'SELECT worklist.release($1, $2)', [id, actor]);
    log(`released ${id}`);
  } catch (err) {
    // WL006: not ours any more, or an earlier release already went through.
    if (err.code !== 'WL006' && err.code !== 'WL001') throw err;
    log(`released ${id} (${err.code})`);
  }
  unfinished = null;
}

// The review, then the completion, or the release when a stop request cut
// the review short.
async function handle(client, task) {
  const decision = await review(task);
  if (decision === null) {
    await release(client, task.id);
  } else {
    await complete(client, task.id, decision);
  }
}

// After every (re)connect, before any new work: finish what this actor
// holds.  held() is the database's word on it: a task whose review or
// completion the broken connection cut off, a claim whose answer was lost
// with it.  The call in flight when the connection broke, if its task is
// not among them, went through or was overtaken: sending it again tells
// which (a retried completion answers true when it was ours).
async function recover(client) {
  const tasks = await call(client,
    'SELECT id, payload FROM worklist.held($1)', [actor]);
  if (unfinished && !tasks.some((t) => t.id === unfinished.id)) {
    const { op, id, decision } = unfinished;
    if (op === 'complete') await complete(client, id, decision);
    else await release(client, id);
  }
  unfinished = null;
  for (const task of tasks) {
    log(`recovered ${task.id}`);
    await handle(client, task);
  }
}

// Resolves with 'notification', 'poll', 'stop' or 'closed' (the server
// went away; the next query reports why).
function waitForWork(state) {
  if (stopper.requested) return Promise.resolve('stop');
  if (state.closed) return Promise.resolve('closed');
  if (wakePending || resubscribe) return Promise.resolve('notification');
  return new Promise((resolve) => {
    const done = (why) => {
      clearTimeout(timer);
      wake = null;
      stopper.waiters.delete(onStop);
      resolve(why);
    };
    const onStop = () => done('stop');
    const timer = setTimeout(() => done('poll'), pollMs);
    wake = done;
    stopper.waiters.add(onStop);
  });
}

async function serve(client) {
  const state = { closed: false };
  client.on('end', () => {
    state.closed = true;
    if (wake) wake('closed');
  });
  client.on('notification', onNotification);
  channel = null;
  await subscribe(client);
  await recover(client);
  while (!stopper.requested) {
    if (resubscribe) await subscribe(client);
    wakePending = false;
    const [task] = await call(client,
      'SELECT id, payload FROM worklist.claim_next($1, $2) WHERE id IS NOT NULL',
      [actor, roles]);
    if (task) {
      log(`claimed ${task.id}`);
      await handle(client, task);
      continue;
    }
    const why = await waitForWork(state);
    if (why === 'notification' || why === 'poll') log(`woken by ${why}`);
  }
  await client.query('UNLISTEN *');
}

async function main() {
  let failures = 0;
  for (;;) {
    let client = null;
    try {
      client = await connect({
        tenant: opt.tenant, applicationName: `worker ${actor}`, stopper, log, failures,
      });
      if (!client) break; // stopped while reconnecting
      log('connected');
      failures = 0;
      await serve(client);
      break;
    } catch (err) {
      const what = classify(err);
      if (what === 'reconnect') {
        failures += 1;
        log(`connection lost: ${describe(err, client)}; reconnecting`);
        continue;
      }
      log(`${what === 'config' ? 'configuration error' : 'error'}: ${describe(err)}`);
      process.exitCode = what === 'config' ? EXIT_CONFIG : EXIT_FATAL;
      return;
    } finally {
      if (client) await client.end().catch(() => {});
    }
  }
  if (unfinished) log(`stopped with ${unfinished.op} of ${unfinished.id} unfinished`);
  log('stopped');
}

main().catch((err) => {
  console.error(err);
  process.exitCode = EXIT_FATAL;
});
