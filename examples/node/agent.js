#!/usr/bin/env node
// agent.js — an agent that carries one run through its steps, writing a
// checkpoint after each under a lease, so that a crash loses at most the
// step in hand and two agents never both write to the run.
//
//   WORKLIST_TENANT=acme node agent.js [--holder NAME] [--steps 10]
//       [--ttl-seconds 30] [--step-ms 1000] [--wait-seconds 0]
//       PROJECT SESSION RUN
//
// The lease is taken with claim_run and renewed by claiming again with the
// same holder when half of it has passed.  Every claim returns a new fence;
// each checkpoint is written with the fence of the lease in hand, and the
// server refuses it (WL007 stale_fence) once another holder has claimed the
// run since: then this agent has lost the run and stops at once.  The
// agent resumes after the run's newest checkpoint, so a second agent picks
// up where the first left off.
//
// Fences are bigint: they stay strings here, never JavaScript numbers,
// which cannot hold every bigint exactly.
'use strict';

const os = require('node:os');
const { parseArgs } = require('node:util');
const {
  EXIT_CONFIG, EXIT_FATAL, EXIT_LEASE_LOST, Stopper, call, classify, connect, describe,
} = require('./worklist');

const { values: opt, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    tenant: { type: 'string', default: process.env.WORKLIST_TENANT },
    holder: { type: 'string', default: `${os.hostname()}-agent-${process.pid}` },
    steps: { type: 'string', default: '10' },
    'ttl-seconds': { type: 'string', default: '30' },
    'step-ms': { type: 'string', default: '1000' },
    'wait-seconds': { type: 'string', default: '0' },
  },
});
if (!opt.tenant || positionals.length !== 3) {
  console.error('usage: WORKLIST_TENANT=... node agent.js [options] PROJECT SESSION RUN');
  process.exit(2);
}
const [project, session, run] = positionals;
const holder = opt.holder;
const steps = Number(opt.steps);
const ttlSeconds = Number(opt['ttl-seconds']);
const stepMs = Number(opt['step-ms']);
const waitMs = Number(opt['wait-seconds']) * 1000;

const stopper = new Stopper();
process.on('SIGTERM', () => stopper.request());
process.on('SIGINT', () => stopper.request());

function log(message) {
  console.log(`${holder} ${message}`);
}

class LeaseLost extends Error {}

let lease = null;       // { fence: '123', at: performance.now() of the claim }
let everHeld = false;   // did this agent hold the run at some point?
let nextStep = 1;
const startedAt = performance.now();

// Takes or renews the lease.  NULL from claim_run means somebody else
// holds an unexpired lease on the run.
async function claim(client) {
  const at = performance.now();
  const [row] = await call(client,
    `SELECT fence::text AS fence FROM worklist.claim_run($1, $2, $3, $4, make_interval(secs => $5))
      WHERE fence IS NOT NULL`,
    [project, session, run, holder, ttlSeconds]);
  if (!row) return false;
  const first = lease === null;
  lease = { fence: row.fence, at };
  everHeld = true;
  log(`${first ? 'claimed' : 'renewed'} fence=${lease.fence}`);
  if (first) {
    // Resume after the newest checkpoint, whoever wrote it.
    const [{ done }] = await call(client,
      `SELECT coalesce(max((body->>'step')::int), 0) AS done
         FROM worklist.list_checkpoints($1, $2, $3)`, [project, session, run]);
    nextStep = done + 1;
  }
  return true;
}

// The lease in hand, taken or renewed as needed.
async function ensureLease(client) {
  if (lease && performance.now() - lease.at < (ttlSeconds * 1000) / 2) return;
  for (;;) {
    if (await claim(client)) return;
    if (everHeld) throw new LeaseLost('another holder has the run');
    if (performance.now() - startedAt >= waitMs) throw new LeaseLost('the run is held by another holder');
    await stopper.sleep(200);
    if (stopper.requested) return;
  }
}

async function writeCheckpoint(client, step) {
  const id = `step-${String(step).padStart(4, '0')}`;
  const body = { step, holder, fence: lease.fence };
  try {
    await call(client,
      `SELECT worklist.write_checkpoint($1, $2, $3, $4, $5, fence => $6::bigint)`,
      [project, session, run, id, body, lease.fence]);
  } catch (err) {
    if (err.code === 'WL007') throw new LeaseLost(`stale fence (WL007): ${err.detail || err.message}`);
    throw err;
  }
  log(`checkpoint ${id} fence=${lease.fence}`);
}

async function releaseLease(client) {
  if (!lease) return;
  // With a stale fence this does nothing: it never hands away a run that
  // somebody else holds now.
  await call(client, 'SELECT worklist.release_run($1, $2, $3, $4::bigint)',
    [project, session, run, lease.fence]);
  log(`released fence=${lease.fence}`);
}

// The step itself.  Here: wait step-ms.  Returns false when a stop request
// cut it short.
async function doStep() {
  await stopper.sleep(stepMs);
  return !stopper.requested;
}

async function work(client) {
  // A renewal in flight when the connection broke may have committed and
  // moved the fence: claim again before writing anything.
  lease = null;
  for (;;) {
    await ensureLease(client);
    if (stopper.requested) {
      await releaseLease(client);
      log('stopped');
      return 0;
    }
    if (nextStep > steps) {
      await releaseLease(client);
      log(`done: ${steps} steps`);
      return 0;
    }
    if (!(await doStep())) continue;
    // Retried after a reconnect, a write overwrites the same checkpoint.
    await writeCheckpoint(client, nextStep);
    nextStep += 1;
  }
}

async function main() {
  let failures = 0;
  for (;;) {
    let client = null;
    try {
      client = await connect({
        tenant: opt.tenant, applicationName: `agent ${holder}`, stopper, log, failures,
      });
      if (!client) {
        log('stopped');
        return 0;
      }
      log('connected');
      failures = 0;
      return await work(client);
    } catch (err) {
      if (err instanceof LeaseLost) {
        log(`lease lost: ${err.message}; giving up`);
        return EXIT_LEASE_LOST;
      }
      const what = classify(err);
      if (what === 'reconnect') {
        failures += 1;
        log(`connection lost: ${describe(err, client)}; reconnecting`);
        continue;
      }
      log(`${what === 'config' ? 'configuration error' : 'error'}: ${describe(err)}`);
      return what === 'config' ? EXIT_CONFIG : EXIT_FATAL;
    } finally {
      if (client) await client.end().catch(() => {});
    }
  }
}

main().then((status) => {
  process.exitCode = status;
}, (err) => {
  console.error(err);
  process.exitCode = EXIT_FATAL;
});
