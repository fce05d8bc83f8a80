// TaskWorker against the server: the handler asked once per decision,
// tasks given up skipped, known decisions sent straight to complete after
// held(), and what a stop gives back.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { InsufficientPrivilegeError, TaskWorker, Worklist } from '../index.js';
import { DB, ROLES, TENANT, setUp, tearDown } from './setup.mjs';

let wl;
before(async () => {
  await setUp();
  wl = new Worklist({ tenant: TENANT, database: DB });
});
after(async () => {
  await wl.end();
  await tearDown();
});

// Runs a worker until until(events) holds, then stops it; returns its events.
async function work(options, until) {
  const controller = new AbortController();
  const events = [];
  const worker = new TaskWorker(wl, {
    pollMs: 100,
    ...options,
    onEvent: (event, e) => {
      events.push([event, e.id]);
      if (until(events)) controller.abort();
    },
  });
  const timer = setTimeout(() => controller.abort(), 10000);
  await worker.run({ signal: controller.signal });
  clearTimeout(timer);
  return { worker, events };
}
const has = (event, id) => (events) => events.some(([e, i]) => e === event && i === id);

it('completes what it claims, asking the handler once per task', async () => {
  for (const id of ['a1', 'a2', 'a3']) await wl.openTask(id, 'c', ['ra'], { payload: { n: id } });
  const { worker, events } = await work({ actor: 'wa', roles: ['ra'], handler: async (t) => ({ ok: t.payload.n }) },
    (ev) => ev.filter(([e]) => e === 'completed').length === 3);
  assert.equal(worker.handlerCalls, 3);
  for (const id of ['a1', 'a2', 'a3']) {
    const t = await wl.task(id);
    assert.deepEqual([t.state, t.decided_by, t.decision], ['completed', 'wa', { ok: id }]);
  }
  assert.deepEqual(events.slice(0, 2).map(([e]) => e), ['connected', 'listening']);
});

it('a task given up (no decision, or an error) is released and skipped', async () => {
  await wl.openTask('b1', 'c', ['rb'], { priority: 2 });
  await wl.openTask('b2', 'c', ['rb'], { priority: 1 });
  await wl.openTask('b3', 'c', ['rb'], { priority: 0 });
  const seen = [];
  const { worker, events } = await work({
    actor: 'wb', roles: ['rb'],
    handler: async (t) => {
      seen.push(t.id);
      if (t.id === 'b1') return null;
      if (t.id === 'b2') throw new Error('cannot');
      return 'yes';
    },
  }, has('completed', 'b3'));
  assert.deepEqual(seen, ['b1', 'b2', 'b3']);
  assert.equal(worker.handlerCalls, 3);
  assert.ok(has('failed', 'b2')(events));
  assert.equal((await wl.task('b1')).state, 'open');
  assert.equal((await wl.task('b2')).state, 'open');
  assert.equal((await wl.task('b3')).state, 'completed');
});

it('a held task whose decision is known goes to complete, not to the handler', async () => {
  await wl.openTask('c1', 'c', ['rc']);
  await wl.openTask('c2', 'c', ['rc']);
  await wl.claim('c1', 'wc', ['rc']);
  await wl.claim('c2', 'wc', ['rc']);
  const controller = new AbortController();
  const events = [];
  const worker = new TaskWorker(wl, {
    actor: 'wc', roles: ['rc'], pollMs: 100, handler: async () => 'from the handler',
    onEvent: (event, e) => {
      events.push([event, e.id]);
      if (events.filter(([ev]) => ev === 'completed').length === 2) controller.abort();
    },
  });
  worker.decided.set('c1', 'decided before');
  await worker.run({ signal: controller.signal });
  assert.equal(worker.handlerCalls, 1);
  assert.equal((await wl.task('c1')).decision, 'decided before');
  assert.equal((await wl.task('c2')).decision, 'from the handler');
  assert.ok(has('recovered', 'c1')(events) && has('resending', 'c1')(events));
});

it('a decision whose task was settled by somebody else is dropped as lost', async () => {
  await wl.openTask('d1', 'c', ['rd']);
  await wl.claim('d1', 'wd', ['rd']);
  await wl.complete('d1', 'wd', 'first');
  const worker = new TaskWorker(wl, { actor: 'wd', roles: ['rd'], pollMs: 100, handler: async () => 'x' });
  worker.decided.set('d1', 'second');
  const controller = new AbortController();
  const events = [];
  worker.emit = (event, e) => {
    events.push([event, e.id]);
    if (event === 'lost') controller.abort();
  };
  await worker.run({ signal: controller.signal });
  assert.ok(has('lost', 'd1')(events));
  assert.equal(worker.decided.size, 0);
  assert.equal((await wl.task('d1')).decision, 'first');
});

it('a stop lets the handler in progress finish and gives back what it has not started', async () => {
  await wl.openTask('e1', 'c', ['re']);
  await wl.openTask('e2', 'c', ['re']);
  await wl.claim('e1', 'we', ['re']);
  await wl.claim('e2', 'we', ['re']);
  const controller = new AbortController();
  const worker = new TaskWorker(wl, {
    actor: 'we', roles: ['re'], pollMs: 100,
    handler: async (t, { signal }) => {
      controller.abort();
      assert.equal(signal.aborted, true);
      return `done ${t.id}`;
    },
  });
  await worker.run({ signal: controller.signal });
  assert.equal(worker.handlerCalls, 1);
  assert.equal((await wl.task('e1')).state, 'completed');
  const e2 = await wl.task('e2');
  assert.deepEqual([e2.state, e2.holder], ['open', null]);
});

it('a permanent error ends run() with it', async () => {
  const stranger = new Worklist({ tenant: TENANT, database: DB, user: ROLES.stranger });
  try {
    await assert.rejects(new TaskWorker(stranger, { actor: 'x', roles: ['r'], handler: async () => 1 })
      .run({ signal: new AbortController().signal }), InsufficientPrivilegeError);
  } finally {
    await stranger.end();
  }
});
