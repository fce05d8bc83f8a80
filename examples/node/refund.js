#!/usr/bin/env node
// refund.js — an agent that asks a person before it pays a refund, and
// never polls.
//
//   WORKLIST_TENANT=acme node refund.js [--holder NAME] [--ttl-seconds 30] PROJECT
//
// It takes the runs of PROJECT from the queue (claim_next_run).  A run
// starts with a checkpoint whose body is {"amount": ...}.  On its first
// step the agent opens a task for the role finance and parks the run on it
// (park_run), which gives the lease up: the agent goes on with other runs.
// When a reviewer settles the task, the run is claimable again; the next
// free agent takes it, reads the answer from the task, writes the
// checkpoint "paid" or "refused", and the run is concluded.  Leases are
// renewed at half the ttl; a step whose lease was lost (WL007) or whose run
// was concluded under it (WL008) stops.  It wakes on the run
// notifications, and polls too.
import os from 'node:os';
import { parseArgs } from 'node:util';
import { ConfigurationError, InsufficientPrivilegeError, RunWorker, Worklist } from 'worklist';

const { values: opt, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    tenant: { type: 'string', default: process.env.WORKLIST_TENANT },
    holder: { type: 'string', default: `${os.hostname()}-refund-${process.pid}` },
    'ttl-seconds': { type: 'string', default: '30' },
    'poll-seconds': { type: 'string', default: '5' },
  },
});
if (!opt.tenant || positionals.length !== 1) {
  console.error('usage: WORKLIST_TENANT=... node refund.js [options] PROJECT');
  process.exit(2);
}
const { holder } = opt;
const log = (line) => console.log(`${holder} ${line}`);
const wl = new Worklist({ tenant: opt.tenant, application_name: `refund ${holder}`, max: 2 });

async function step(ctx) {
  const { run } = ctx.run;
  if (!ctx.checkpoint.park_tasks) {
    const { amount } = ctx.checkpoint.body;
    const task = `approve-${run}`;
    await wl.openTask(task, run, ['finance'], { run_id: run, payload: { amount } });
    await ctx.park('asked', [task], { body: { amount } });
    log(`parked ${run} on ${task}`);
    return;
  }
  const [task] = ctx.tasks;
  const approved = task.state === 'completed' && Boolean(task.decision && task.decision.approved);
  const outcome = approved ? 'paid' : 'refused';
  await ctx.write(outcome, {
    amount: ctx.checkpoint.body.amount, task: task.id, state: task.state, decided_by: task.decided_by,
  });
  log(`${outcome} ${run} (${task.state} by ${task.decided_by})`);
  // returning without parking concludes the run
}

const worker = new RunWorker(wl, {
  project: positionals[0],
  holder,
  handler: step,
  ttl: Number(opt['ttl-seconds']) * 1000,
  pollMs: Number(opt['poll-seconds']) * 1000,
  onEvent: (name, e) => {
    if (['lost', 'failed', 'concluded'].includes(name)) {
      log(`${name} ${e.run.run}${e.error ? `: ${e.error.message}` : ''}`);
    }
  },
});
try {
  await worker.run();
  log('stopped');
} catch (err) {
  const config = err instanceof InsufficientPrivilegeError || err instanceof ConfigurationError;
  log(`${config ? 'configuration error' : 'error'}: ${err.message} [${err.code}]`);
  process.exitCode = config ? 78 : 1;
}
await wl.end();
