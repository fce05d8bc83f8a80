#!/usr/bin/env node
// approval.js — a LangGraph graph that asks a person to approve a payment.
// Its `approve` node calls interruptAsTask: the interrupt is a worklist task
// for the approvers, the requester excluded (four-eyes, enforced by the
// database), with a due time and an expiry policy.  The run waits parked on
// the task, in no process; once a person completes the task, or its policy
// settles it when it is overdue, a worker resumes the graph with the outcome.
//
//   WORKLIST_TENANT=acme node approval.js start THREAD --requester alice --amount 120
//        [--approvers ROLE] [--due-seconds N] [--policy deny|proceed|escalate]
//   WORKLIST_TENANT=acme node approval.js worker [--holder NAME] [--poll-ms 1000]
//
// `start` runs a new thread until the graph waits on its task (the run is
// parked) and exits; `worker` takes runs from the queue (claim_next_run),
// woken by the tenant's notifications, until SIGTERM.  Both connect with
// the PG* variables.
import os from 'node:os';
import { parseArgs } from 'node:util';
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { GraphWorker, WorklistSaver, interruptAsTask } from '@worklist/langgraph';

const State = Annotation.Root({ request: Annotation(), outcome: Annotation(), result: Annotation() });

function approve({ request }) {
  const outcome = interruptAsTask({
    roles: [request.approvers],
    excluded: [request.requester],
    dueAt: request.dueAt,
    expiryPolicy: request.policy,
    payload: { amount: request.amount, requester: request.requester },
  });
  return { outcome }; // { id, state, decision, decided_by } of the task
}

function pay({ request, outcome }) {
  const approved = outcome.state === 'completed'
    ? outcome.decision?.approved === true
    : outcome.decision?.policy === 'proceed';
  const how = outcome.decided_by ? `${outcome.state} by ${outcome.decided_by}` : `${outcome.state}: ${outcome.decision?.policy}`;
  return { result: `${approved ? 'paid' : 'refused'} ${request.amount} (${how})` };
}

const { values: opt, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    tenant: { type: 'string', default: process.env.WORKLIST_TENANT },
    holder: { type: 'string', default: `${os.hostname()}-approval-${process.pid}` },
    requester: { type: 'string' },
    amount: { type: 'string', default: '0' },
    approvers: { type: 'string', default: 'approvers' },
    'due-seconds': { type: 'string' },
    policy: { type: 'string', default: 'deny' },
    'poll-ms': { type: 'string', default: '1000' },
  },
});
const [command, thread] = positionals;
if (!opt.tenant || !(command === 'worker' || (command === 'start' && thread && opt.requester))) {
  console.error('usage: WORKLIST_TENANT=... node approval.js start THREAD --requester NAME [options] | worker [options]');
  process.exit(2);
}
const { holder } = opt;
const log = (line) => console.log(`${holder} ${line}`);

const saver = new WorklistSaver({ tenant: opt.tenant, project: 'approvals', application_name: `approval ${holder}`, max: 2 });
const graph = new StateGraph(State)
  .addNode('approve', approve)
  .addNode('pay', pay)
  .addEdge(START, 'approve')
  .addEdge('approve', 'pay')
  .addEdge('pay', END)
  .compile({ checkpointer: saver });
const worker = new GraphWorker({
  graph,
  holder,
  pollMs: Number(opt['poll-ms']),
  onEvent: (name, e) => {
    if (name === 'parked') log(`parked ${e.thread} on ${e.tasks.map((t) => t.id).join(' ')}`);
    else if (name === 'finished') log(`finished ${e.thread}: ${e.values.result}`);
    else log(`${name}${e.thread ? ` ${e.thread}` : ''}${e.error ? `: ${e.error.message} [${e.error.code}]` : ''}`);
  },
});

try {
  if (command === 'start') {
    const due = opt['due-seconds'];
    const request = {
      requester: opt.requester, amount: Number(opt.amount), approvers: opt.approvers, policy: opt.policy,
      dueAt: due === undefined ? undefined : new Date(Date.now() + Number(due) * 1000).toISOString(),
    };
    if ((await worker.start(thread, { request })) === null) {
      log(`${thread} is leased by another worker`);
      process.exitCode = 75;
    }
  } else {
    const stop = new AbortController();
    for (const s of ['SIGTERM', 'SIGINT']) process.on(s, () => stop.abort());
    log('working');
    await worker.run({ signal: stop.signal });
    log('stopped');
  }
} catch (err) {
  log(`error: ${err.message} [${err.code}]`);
  process.exitCode = err.code === '42501' ? 78 : 1;
}
await saver.end();
