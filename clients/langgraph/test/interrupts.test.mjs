// Interrupts as tasks: interruptAsTask in a node opens a worklist task and
// GraphWorker parks the run on it; claim_next_run hands the run back once
// the task is settled (a person's complete, an expiry policy) and the graph
// resumes with the task's outcome.  In a tenant of its own.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { Annotation, END, START, StateGraph, interrupt } from '@langchain/langgraph';
import { ExcludedError, Worklist } from 'worklist';
import { GraphWorker, InvalidConfigError, TASK_KEY, WorklistSaver, interruptAsTask, interruptTaskId } from '../index.js';

const TENANT = 'langgraph-interrupts';

const State = Annotation.Root({
  amount: Annotation(),
  requester: Annotation(),
  dueAt: Annotation(),
  answers: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }),
  log: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

// request -> approve (a task for the approvers, the requester excluded) -> finish
function approvalGraph(saver) {
  return new StateGraph(State)
    .addNode('request', (s) => ({ log: [`request ${s.amount} by ${s.requester}`] }))
    .addNode('approve', (s) => {
      const outcome = interruptAsTask({
        roles: ['approvers'], excluded: [s.requester], dueAt: s.dueAt, expiryPolicy: 'deny',
        payload: { amount: s.amount }, priority: 3,
      });
      return { answers: [outcome] };
    })
    .addNode('finish', (s) => ({ log: [`finish ${s.answers.at(-1).state}`] }))
    .addEdge(START, 'request').addEdge('request', 'approve').addEdge('approve', 'finish').addEdge('finish', END)
    .compile({ checkpointer: saver });
}

// two approvals at once (a fan-out): both must be settled before it goes on
function twoApprovals(saver) {
  const ask = (role) => () => ({ answers: [interruptAsTask({ roles: [role], payload: { role } })] });
  return new StateGraph(State)
    .addNode('legal', ask('legal'))
    .addNode('finance', ask('finance'))
    .addNode('finish', (s) => ({ log: [`finish ${s.answers.length}`] }))
    .addEdge(START, 'legal').addEdge(START, 'finance')
    .addEdge('legal', 'finish').addEdge('finance', 'finish').addEdge('finish', END)
    .compile({ checkpointer: saver });
}

describe('interrupts as tasks', () => {
  let pool;
  let wl;
  let saver;
  let worker;
  const events = [];

  beforeAll(() => {
    pool = new pg.Pool({ max: 4 });
    wl = new Worklist({ tenant: TENANT, pool });
  });
  beforeEach(() => {
    saver = new WorklistSaver({ worklist: wl, project: `interrupts-${randomUUID().slice(0, 8)}` });
    worker = new GraphWorker({ graph: approvalGraph(saver), holder: 'worker-1', ttlMs: 10000, pollMs: 50,
      onEvent: (name, e) => events.push([name, e.thread]) });
  });
  afterEach(async () => {
    await saver.end();
  });
  afterAll(async () => {
    await pool.query(`SELECT pg_catalog.set_config('worklist.tenant', $1, false), worklist.erase_tenant()`, [TENANT]);
    await pool.end();
  });

  const runOf = async (thread) => (await wl.listDurableRuns({ project: saver.project })).entries.find((e) => e.run === thread);
  const tasksOf = async (thread) => (await pool.query(
    `SELECT t.id FROM pg_catalog.set_config('worklist.tenant', $1, true) s, worklist.task t
      WHERE t.run_id = $2 ORDER BY t.id`, [TENANT, thread])).rows.map((r) => r.id);

  it('opens a task as the node says and parks the run on it; a person completes it; the graph resumes and finishes', async () => {
    const started = await worker.start('req-1', { amount: 120, requester: 'alice' });
    expect(started.status).toBe('parked');
    const [task] = started.tasks;
    const state = await worker.graph.getState({ configurable: { thread_id: 'req-1' } });
    const [pendingInterrupt] = state.tasks.flatMap((t) => t.interrupts);
    expect(task.id).toBe(interruptTaskId('req-1', pendingInterrupt.id));
    expect(pendingInterrupt.value[TASK_KEY].roles).toEqual(['approvers']);
    expect(task).toMatchObject({
      state: 'open', case_id: 'req-1', run_id: 'req-1', roles: ['approvers'], excluded: ['alice'],
      expiry_policy: 'deny', priority: 3, payload: { amount: 120 }, due_at: null,
    });
    // parked on the checkpoint the graph stopped at, the lease given up
    const run = await runOf('req-1');
    expect(run).toMatchObject({ park_state: 'outstanding', park_checkpoint_id: state.config.configurable.checkpoint_id,
      park_request: 'langgraph-interrupt' });
    expect((await wl.readCheckpoint(saver.project, saver.session, 'req-1', run.park_checkpoint_id)).park_tasks).toEqual([task.id]);
    expect(run.claim_expired).toBe(true);
    expect(await worker.runOnce()).toBeNull(); // outstanding: not claimable

    // four-eyes: the requester is refused by the database
    await expect(wl.claim(task.id, 'alice', ['approvers'])).rejects.toThrow(ExcludedError);
    await expect(wl.claim(task.id, 'alice', ['approvers'])).rejects.toMatchObject({ code: 'WL002' });
    await wl.claim(task.id, 'bob', ['approvers']);
    expect(await worker.runOnce()).toBeNull(); // claimed, still pending
    await wl.complete(task.id, 'bob', { approved: true });

    const done = await worker.runOnce();
    expect(done.status).toBe('finished');
    expect(done.values.answers).toEqual([{ id: task.id, state: 'completed', decision: { approved: true }, decided_by: 'bob' }]);
    expect(done.values.log).toEqual(['request 120 by alice', 'finish completed']);
    expect(await runOf('req-1')).toMatchObject({ park_state: 'resolved' });
    expect((await wl.listDurableRuns({ project: saver.project, concluded: true })).entries.map((e) => e.run)).toEqual(['req-1']);
    expect(await tasksOf('req-1')).toEqual([task.id]); // one task, opened once
    expect(await worker.runOnce()).toBeNull();

    // the history is one chain through the park
    const chain = [];
    for await (const t of saver.list({ configurable: { thread_id: 'req-1' } })) chain.push(t);
    for (let i = 0; i < chain.length - 1; i++) {
      expect(chain[i].parentConfig.configurable.checkpoint_id).toBe(chain[i + 1].config.configurable.checkpoint_id);
    }
    expect(events).toContainEqual(['parked', 'req-1']);
    expect(events).toContainEqual(['finished', 'req-1']);
  });

  it('a task settled by its expiry policy resumes the graph with the policy', async () => {
    const dueAt = new Date(Date.now() + 60000);
    const started = await worker.start('req-2', { amount: 5, requester: 'carol', dueAt });
    const [task] = started.tasks;
    expect(task.due_at).toEqual(dueAt);
    expect(await worker.runOnce()).toBeNull();
    expect((await wl.sweep({ now: new Date(Date.now() + 120000) })).denied).toBe(1);
    const done = await worker.runOnce();
    expect(done.values.answers).toEqual([{ id: task.id, state: 'expired', decision: { policy: 'deny' }, decided_by: null }]);
    expect(done.values.log.at(-1)).toBe('finish expired');
  });

  it('parks on every interrupt of a step and resumes once all are settled', async () => {
    worker = new GraphWorker({ graph: twoApprovals(saver), holder: 'worker-1', ttlMs: 10000 });
    const started = await worker.start('req-3', {});
    expect(started.tasks.map((t) => t.roles[0]).sort()).toEqual(['finance', 'legal']);
    const [legal, finance] = ['legal', 'finance'].map((r) => started.tasks.find((t) => t.roles[0] === r));
    await wl.claim(legal.id, 'dana', ['legal']);
    await wl.complete(legal.id, 'dana', { ok: true });
    expect(await worker.runOnce()).toBeNull(); // finance still pending
    await wl.claim(finance.id, 'erik', ['finance']);
    await wl.complete(finance.id, 'erik', { ok: false });
    const done = await worker.runOnce();
    expect(done.status).toBe('finished');
    const byRole = Object.fromEntries(done.values.answers.map((a) => [a.decided_by, a.decision]));
    expect(byRole).toEqual({ dana: { ok: true }, erik: { ok: false } });
    expect(done.values.log).toEqual(['finish 2']);
  });

  it('the loop (run) is woken by the notification of the settlement and resumes the run at once', async () => {
    const started = await worker.start('req-4', { amount: 7, requester: 'alice' });
    const controller = new AbortController();
    let listening;
    let finished;
    const seen = [new Promise((resolve) => { listening = resolve; }), new Promise((resolve) => { finished = resolve; })];
    const looper = new GraphWorker({ graph: worker.graph, holder: 'looper', ttlMs: 10000, pollMs: 60000,
      onEvent: (name, e) => {
        if (name === 'listening') listening();
        if (name === 'finished') finished(e);
      } });
    const loop = looper.run({ signal: controller.signal });
    await seen[0];
    await new Promise((resolve) => setTimeout(resolve, 300)); // waiting, its first look done
    await wl.claim(started.tasks[0].id, 'bob', ['approvers']);
    const t0 = Date.now();
    await wl.complete(started.tasks[0].id, 'bob', { approved: false });
    const e = await seen[1];
    expect(Date.now() - t0).toBeLessThan(10000); // well before its next poll, a minute on
    controller.abort();
    await loop;
    expect(e.values.answers[0]).toMatchObject({ state: 'completed', decision: { approved: false } });
  });

  it('a run that stopped on an interrupt without its park (a worker gone) is parked by the next worker', async () => {
    const lease = await saver.lease('req-5', { holder: 'gone', ttlMs: 10000 });
    await worker.graph.invoke({ amount: 9, requester: 'alice' }, { configurable: { thread_id: 'req-5' }, signal: lease.signal });
    await lease.release(); // as if its lease had run out before the park
    expect(await tasksOf('req-5')).toEqual([]);
    const step = await worker.runOnce();
    expect(step.status).toBe('parked');
    expect(await tasksOf('req-5')).toEqual([step.tasks[0].id]);
    expect(await runOf('req-5')).toMatchObject({ park_state: 'outstanding' });
    // opening again finds the same task
    expect((await worker.openTasks('req-5', (await worker.graph.getState({ configurable: { thread_id: 'req-5' } }))
      .tasks.flatMap((t) => t.interrupts))).map((t) => t.id)).toEqual([step.tasks[0].id]);
    expect(await tasksOf('req-5')).toHaveLength(1);
  });

  it('refuses what it cannot map to a task', async () => {
    expect(() => new GraphWorker({ graph: approvalGraph(undefined), holder: 'w' })).toThrow(InvalidConfigError);
    expect(() => new GraphWorker({ graph: worker.graph, holder: '' })).toThrow(InvalidConfigError);
    const bad = (spec) => new StateGraph(State).addNode('n', () => ({ log: [interruptAsTask(spec)] }))
      .addEdge(START, 'n').addEdge('n', END).compile({ checkpointer: saver });
    for (const spec of [{}, { roles: [] }, { roles: ['r'], expiryPolicy: 'maybe' }, { roles: ['r'], dueAt: 'soon' },
      { roles: ['r'], excluded: [''] }, { roles: ['r'], id: '' }]) {
      await expect(new GraphWorker({ graph: bad(spec), holder: 'w' }).start(`bad-${randomUUID()}`, {}))
        .rejects.toThrow(InvalidConfigError);
    }
    // a plain interrupt() has no task: refused, and the lease is given back
    const plain = new StateGraph(State).addNode('n', () => ({ log: [interrupt('what?')] }))
      .addEdge(START, 'n').addEdge('n', END).compile({ checkpointer: saver });
    const w = new GraphWorker({ graph: plain, holder: 'w' });
    await expect(w.start('plain', {})).rejects.toThrow(/not an interruptAsTask/);
    expect((await runOf('plain')).claim_expired).toBe(true);
    expect(saver.leases.size).toBe(0);
  });
});
