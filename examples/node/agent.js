#!/usr/bin/env node
// agent.js — carries one run through its steps, writing a checkpoint after
// each under a lease, so that a crash loses at most the step in hand and
// two agents never both write to the run.
//
//   WORKLIST_TENANT=acme node agent.js [--holder NAME] [--steps 10]
//       [--ttl-seconds 30] [--step-ms 1000] [--wait-seconds 0]
//       PROJECT SESSION RUN
//
// The lease is the worklist package's RunLease: claim_run, renewed after
// half of the ttl, each checkpoint written with the fence in hand.  Once
// another holder has claimed the run, a write is refused (WL007
// stale_fence) and this agent stops at once.  It resumes after the run's
// newest checkpoint, so a second agent picks up where the first left off.
// Fences are BigInt; the checkpoint body carries them as strings.
import os from 'node:os';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ConfigurationError, InsufficientPrivilegeError, RunLease, StaleFenceError, Worklist, backoff, isTransient,
  stopSignal,
} from 'worklist';

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
const { holder } = opt;
const steps = Number(opt.steps);
const waitMs = Number(opt['wait-seconds']) * 1000;
const log = (line) => console.log(`${holder} ${line}`);
const signal = stopSignal();
const startedAt = Date.now();

const wl = new Worklist({ tenant: opt.tenant, application_name: `agent ${holder}`, max: 1 });
wl.pool.on('connect', () => log('connected'));
const lease = new RunLease(wl, { project, session, run, holder, ttl: Number(opt['ttl-seconds']) * 1000 });

class LeaseLost extends Error {}

// Takes the lease (waiting up to wait-seconds while another holder has
// it), then resumes after the newest checkpoint, whoever wrote it.
async function take() {
  while (!(await lease.claim())) {
    if (Date.now() - startedAt >= waitMs) throw new LeaseLost('the run is held by another holder');
    await sleep(200);
  }
  log(`claimed fence=${lease.fence}`);
  const done = (await wl.listCheckpoints(project, session, run)).map((c) => c.body.step);
  return Math.max(0, ...done) + 1;
}

// The step itself: wait step-ms.  False when a stop request cut it short.
async function doStep() {
  try {
    await sleep(Number(opt['step-ms']), null, { signal });
    return true;
  } catch {
    return false;
  }
}

async function work() {
  let next = null; // null: (re)connected, the lease must be taken first
  for (let failures = 0; ;) {
    try {
      if (next === null) next = await take();
      else if (lease.due) {
        if (!(await lease.claim())) throw new LeaseLost('another holder has the run');
        log(`renewed fence=${lease.fence}`);
      }
      failures = 0;
      if (signal.aborted || next > steps) {
        await lease.release();
        log(`released fence=${lease.fence}`);
        log(signal.aborted ? 'stopped' : `done: ${steps} steps`);
        return 0;
      }
      if (!(await doStep())) continue;
      const id = `step-${String(next).padStart(4, '0')}`;
      // Retried after a reconnect, a write overwrites the same checkpoint.
      await lease.write(id, { step: next, holder, fence: String(lease.fence) });
      log(`checkpoint ${id} fence=${lease.fence}`);
      next += 1;
    } catch (err) {
      if (err instanceof StaleFenceError) throw new LeaseLost(`stale fence (WL007): ${err.detail}`);
      if (!isTransient(err)) throw err;
      failures += 1;
      log(`connection lost: ${err.message}; reconnecting`);
      await sleep(backoff(failures));
      // A renewal in flight may have committed and moved the fence.
      next = null;
    }
  }
}

try {
  process.exitCode = await work();
} catch (err) {
  if (err instanceof LeaseLost) {
    log(`lease lost: ${err.message}; giving up`);
    process.exitCode = 75;
  } else {
    const config = err instanceof InsufficientPrivilegeError || err instanceof ConfigurationError;
    log(`${config ? 'configuration error' : 'error'}: ${err.message} [${err.code}]`);
    process.exitCode = config ? 78 : 1;
  }
}
await wl.end();
