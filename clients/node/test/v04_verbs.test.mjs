// The 0.4 verbs (§1a, §3a of the contract) through Worklist, WL008, and
// the run worker on claim_next_run, park_run and conclude_run.  Needs a
// server with worklist 0.4; a test of verbs the server does not have yet
// is skipped (and says so).
//
//   node --test test/v04_verbs.test.mjs
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  NotHeldError, RunConcludedError, RunWorker, StaleFenceError, TaskWorker, Worklist,
} from '../index.js';
import { DB, TENANT, setUp, sql, tearDown } from './setup.mjs';

// Skips test t unless the server has every verb named.
async function needs(t, ...verbs) {
  const rows = await sql(`SELECT proname FROM pg_catalog.pg_proc WHERE pronamespace =
    'worklist'::pg_catalog.regnamespace AND proname = ANY($1)`, [verbs]);
  const missing = verbs.filter((v) => !rows.some((r) => r.proname === v));
  if (missing.length) t.skip(`the server lacks ${missing.join(', ')}`);
  return missing.length === 0;
}

let wl;
before(async () => {
  await setUp();
  wl = new Worklist({ tenant: TENANT, database: DB });
});
after(async () => {
  await wl.end();
  await tearDown();
});

describe('tasks (0.4)', () => {
  it('task_history and note', async () => {
    await wl.openTask('h1', 'c', ['r']);
    await wl.claim('h1', 'alice', ['r']);
    const n = await wl.note('h1', 'alice', 'looked at it');
    assert.deepEqual([n.task_id, n.seq, n.event, n.actor], ['h1', 3, 'noted', 'alice']);
    assert.deepEqual(n.detail, { body: 'looked at it' });
    assert.ok(n.at instanceof Date);
    const h = await wl.taskHistory('h1');
    assert.deepEqual(h.map((e) => e.event), ['opened', 'claimed', 'noted']);
    assert.deepEqual((await wl.taskHistory('h1', { after: 1, lim: 1 })).map((e) => e.seq), [2]);
  });

  it('hand_over, update_task, claims', async (ctx) => {
    if (!(await needs(ctx, 'hand_over', 'update_task', 'claims'))) return;
    const t = await wl.handOver('h1', 'alice', 'bob', ['r']);
    assert.equal(t.holder, 'bob');
    await assert.rejects(wl.handOver('h1', 'alice', 'carol', ['r']), NotHeldError);
    const due = new Date(Date.now() + 3600e3);
    const u = await wl.updateTask('h1', { priority: 7, due_at: due });
    assert.deepEqual([u.priority, u.due_at.getTime()], [7, due.getTime()]);
    assert.equal((await wl.updateTask('h1', { due_at: 'infinity' })).due_at, null, 'infinity removes the deadline');
    assert.deepEqual((await wl.claims({ lim: 10 })).map((x) => x.id), ['h1']);
  });

  it('claim_next skip', async () => {
    for (const id of ['m1', 'm2', 'm3']) await wl.openTask(id, 'c', ['rm']);
    assert.equal((await wl.claimNext('w', ['rm'], { skip: ['m1'] })).id, 'm2');
    assert.equal(await wl.hasClaimNextSkip(), true);
  });

  it('claim_many, complete_many', async (t) => {
    if (!(await needs(t, 'claim_many', 'complete_many'))) return;
    const many = await wl.claimMany('w', ['rm'], 5, { skip: [] });
    assert.deepEqual(many.map((x) => x.id), ['m1', 'm3']);
    const settled = await wl.completeMany('w', ['m1', 'm2', 'm3'], [{ ok: 1 }, 'two', 3]);
    assert.deepEqual(settled, [{ id: 'm1', settled: true }, { id: 'm2', settled: true }, { id: 'm3', settled: true }]);
    assert.equal((await wl.task('m2')).decision, 'two');
  });

  it('the task worker skips with claim_next when the server has it', async () => {
    await wl.openTask('s1', 'c', ['rs'], { priority: 1 });
    await wl.openTask('s2', 'c', ['rs']);
    const controller = new AbortController();
    const worker = new TaskWorker(wl, {
      actor: 'ws', roles: ['rs'], pollMs: 100,
      handler: async (t) => (t.id === 's1' ? null : 'yes'),
      onEvent: (event, e) => {
        if (event === 'completed' && e.id === 's2') controller.abort();
      },
    });
    await worker.run({ signal: controller.signal });
    assert.equal(worker.handlerCalls, 2);
    assert.equal((await wl.task('s1')).state, 'open');
  });
});

describe('runs (0.4)', () => {
  it('park_run, claim_next_run, conclude_run, WL008', async () => {
    await wl.writeCheckpoint('q', 's', 'r1', 'c0', { step: 0 }, { metadata: { source: 'loop' } });
    const claimed = await wl.claimNextRun('q', 'agent-1', 60000);
    assert.deepEqual([claimed.project, claimed.session, claimed.run, claimed.holder], ['q', 's', 'r1', 'agent-1']);
    assert.equal(typeof claimed.fence, 'bigint');
    assert.equal(await wl.claimNextRun('q', 'agent-2', 60000), null);
    await wl.openTask('ask-1', 'c', ['r'], { run_id: 'r1' });
    const parked = await wl.parkRun('q', 's', 'r1', 'c1', ['ask-1'], {
      fence: claimed.fence, body: { waiting: true }, park_deadline: new Date(Date.now() + 3600e3),
    });
    assert.deepEqual(parked.park_tasks, ['ask-1']);
    assert.equal(parked.park_request, 'tasks');
    assert.deepEqual(parked.metadata, {});
    assert.equal(await wl.claimNextRun('q', 'agent-2', 60000), null);
    await wl.claim('ask-1', 'alice', ['r']);
    await wl.complete('ask-1', 'alice', { approved: true });
    const resumed = await wl.claimNextRun('q', 'agent-2', 60000, { session: 's' });
    assert.equal(resumed.run, 'r1');
    await assert.rejects(wl.concludeRun('q', 's', 'r1', { fence: claimed.fence }), StaleFenceError);
    assert.equal(await wl.concludeRun('q', 's', 'r1', { fence: resumed.fence }), 0);
    await assert.rejects(wl.writeCheckpoint('q', 's', 'r1', 'c2', {}, { fence: resumed.fence }), RunConcludedError);
    await assert.rejects(wl.claimRun('q', 's', 'r1', 'agent-3', 60000), (e) => e instanceof RunConcludedError && e.code === 'WL008');
    const page = await wl.listDurableRuns({ project: 'q', concluded: true });
    assert.deepEqual(page.entries.map((e) => e.run), ['r1']);
    assert.ok(page.entries[0].concluded_at instanceof Date);
  });

  it('the run worker parks on a task and resumes when it settles', async () => {
    await wl.writeCheckpoint('w', 's', 'refund-9', 'start', { amount: 120 });
    await wl.openTask('approve-9', 'refund-9', ['finance'], { run_id: 'refund-9' });
    const controller = new AbortController();
    const seen = [];
    const worker = new RunWorker(wl, {
      project: 'w', holder: 'agent-w', ttl: 2000, pollMs: 100,
      handler: async (ctx) => {
        seen.push([ctx.checkpoint.checkpoint_id, ctx.tasks.map((t) => t && t.state)]);
        if (ctx.checkpoint.checkpoint_id === 'start') {
          await ctx.park('asked', ['approve-9'], { body: { asked: true } });
          return;
        }
        await ctx.write('paid', { approved: ctx.tasks[0].decision.approved });
      },
      onEvent: (event) => {
        if (event === 'concluded') controller.abort();
      },
    });
    const running = worker.run({ signal: controller.signal });
    const failed = running.then(() => null, (err) => err);
    for (let i = 0; !seen.length; i++) {
      assert.ok(i < 200, 'the handler was not called within 10 s');
      const err = await Promise.race([failed, new Promise((r) => setTimeout(() => r(null), 50))]);
      if (err) throw err;
    }
    await wl.claim('approve-9', 'alice', ['finance']);
    await wl.complete('approve-9', 'alice', { approved: true });
    await running;
    assert.deepEqual(seen, [['start', []], ['asked', ['completed']]]);
    assert.deepEqual((await wl.readCheckpoint('w', 's', 'refund-9', 'paid')).body, { approved: true });
    const page = await wl.listDurableRuns({ project: 'w', concluded: true });
    assert.deepEqual(page.entries.map((e) => e.run), ['refund-9']);
  });

  it('a lease lost under the handler stops its step', async () => {
    await wl.writeCheckpoint('x', 's', 'r', 'c0', {});
    const controller = new AbortController();
    let stopped = null;
    const worker = new RunWorker(wl, {
      project: 'x', holder: 'slow', ttl: 1000, renewFraction: 10, pollMs: 100,
      handler: async (ctx) => {
        await new Promise((r) => setTimeout(r, 1500));
        await wl.claimRun('x', 's', 'r', 'thief', 60000);
        try {
          await ctx.write('c1', {});
        } catch (err) {
          stopped = err;
          throw err;
        }
      },
      onEvent: (event) => {
        if (event === 'lost') controller.abort();
      },
    });
    await worker.run({ signal: controller.signal });
    assert.ok(stopped instanceof StaleFenceError);
    assert.equal(await wl.readCheckpoint('x', 's', 'r', 'c1'), null);
  });
});
