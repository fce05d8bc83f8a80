// Interrupts as tasks (README.md, "Interrupts as tasks").
//
// A node calls interruptAsTask(spec): LangGraph's interrupt() with the
// spec of a worklist task (audience, excluded actors, due time, expiry
// policy) as its value.  GraphWorker drives threads of a graph compiled
// with a WorklistSaver: it runs the graph under the thread's lease; when
// the graph stops on such interrupts it opens one task per interrupt
// (open_task, an id derived from the thread and the interrupt, so opening
// again returns the same task) and parks the run on them (park_run, on the
// checkpoint the graph stopped at, which ends the lease).  Its loop takes
// runs from the queue (claim_next_run): a parked run comes back once its
// tasks are settled -- by a person's complete, by an expiry policy of the
// sweep, by a withdrawal -- and the worker resumes the graph with
// Command({ resume }), each interrupt answered with its task's outcome.  A
// graph that finishes concludes its run (conclude_run).

import { createHash } from 'node:crypto';
import { Command, interrupt } from '@langchain/langgraph';
import { RunConcludedError, StaleFenceError, backoff, fromDriver, isTransient } from 'worklist';
import { InvalidConfigError } from './saver.js';
import { PARK } from './statements.js';

// The key of an interrupt's value that carries a task spec.
export const TASK_KEY = 'worklist:task';
const SETTLED = new Set(['completed', 'expired', 'withdrawn']);
const POLICIES = new Set(['deny', 'proceed', 'escalate']);
const MAX_ID = 256;

function strings(v, what, { empty = true } = {}) {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string' || x === '') || (!empty && v.length === 0)) {
    throw new InvalidConfigError(`interruptAsTask: \`${what}\` must be an array of non-empty strings${empty ? '' : ', not empty'}`);
  }
  return [...v];
}

// The task spec of a node, checked and made JSON (it is stored with the
// interrupt in the checkpoint's pending writes).
function taskSpec(spec) {
  if (spec === null || typeof spec !== 'object') throw new InvalidConfigError('interruptAsTask: needs a task spec object');
  const { id, caseId, roles, excluded, escalationRoles, priority, dueAt, expiryPolicy, claimTimeout, payload } = spec;
  const out = { roles: strings(roles, 'roles', { empty: false }) };
  if (out.roles === undefined) throw new InvalidConfigError('interruptAsTask: `roles` (the audience) is required');
  if (id !== undefined && id !== null) {
    if (typeof id !== 'string' || id === '' || id.length > MAX_ID) {
      throw new InvalidConfigError('interruptAsTask: `id` must be a string of 1 to 256 characters');
    }
    out.id = id;
  }
  if (caseId !== undefined && caseId !== null) out.caseId = String(caseId);
  if (excluded !== undefined) out.excluded = strings(excluded, 'excluded');
  if (escalationRoles !== undefined) out.escalationRoles = strings(escalationRoles, 'escalationRoles');
  if (priority !== undefined && priority !== null) {
    if (!Number.isInteger(priority)) throw new InvalidConfigError('interruptAsTask: `priority` must be an integer');
    out.priority = priority;
  }
  if (dueAt !== undefined && dueAt !== null) {
    const at = dueAt instanceof Date ? dueAt : new Date(dueAt);
    if (Number.isNaN(at.getTime())) throw new InvalidConfigError('interruptAsTask: `dueAt` must be a Date or a timestamp');
    out.dueAt = at.toISOString();
  }
  if (expiryPolicy !== undefined && expiryPolicy !== null) {
    if (!POLICIES.has(expiryPolicy)) throw new InvalidConfigError('interruptAsTask: `expiryPolicy` must be deny, proceed or escalate');
    out.expiryPolicy = expiryPolicy;
  }
  if (claimTimeout !== undefined && claimTimeout !== null) out.claimTimeout = claimTimeout;
  if (payload !== undefined) out.payload = payload;
  return out;
}

// In a node: stops the graph until a person (or the task's expiry policy)
// settles the task; returns its outcome { id, state, decision, decided_by }
// when the graph is resumed.
export function interruptAsTask(spec) {
  return interrupt({ [TASK_KEY]: taskSpec(spec) });
}

// The id of the task of an interrupt: the spec's, or the thread and the
// interrupt's id (a hash when that would be longer than an identifier).
export function interruptTaskId(threadId, interruptId, spec = {}) {
  if (spec.id) return spec.id;
  const id = `${threadId}/${interruptId}`;
  if (id.length <= MAX_ID) return id;
  return `lg-${createHash('sha256').update(`${threadId}\u0000${interruptId}`).digest('hex')}`;
}

// What an interrupt is answered with.
function outcome(task) {
  return { id: task.id, state: task.state, decision: task.decision ?? null, decided_by: task.decided_by ?? null };
}

function sleep(ms, signal) {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

export class GraphWorker {
  // new GraphWorker({ graph, holder }): `graph` compiled with a
  // WorklistSaver as its checkpointer; `holder` names this worker in the
  // leases it takes.
  constructor({ graph, holder, ttlMs = 30000, pollMs = 1000, config = {}, parkRequest = 'langgraph-interrupt',
    onEvent = () => {} } = {}) {
    const saver = graph?.checkpointer;
    if (!saver || typeof saver.lease !== 'function' || typeof saver.project !== 'string') {
      throw new InvalidConfigError('GraphWorker: `graph` must be compiled with a WorklistSaver as its checkpointer');
    }
    if (typeof holder !== 'string' || holder === '' || holder.length > MAX_ID) {
      throw new InvalidConfigError('GraphWorker: `holder` must be a string of 1 to 256 characters');
    }
    this.graph = graph;
    this.saver = saver;
    this.holder = holder;
    this.ttlMs = ttlMs;
    this.pollMs = pollMs;
    this.config = config;
    this.parkRequest = parkRequest;
    this.emit = onEvent;
  }

  // Runs a new thread from `input` under its lease, until the graph
  // finishes (the run is concluded) or waits on tasks (the run is parked).
  // Null when another holder has the thread's lease.
  async start(threadId, input) {
    const lease = await this.saver.lease(threadId, { holder: this.holder, ttlMs: this.ttlMs });
    if (lease === null) return null;
    return this.drive(threadId, lease, input);
  }

  // Takes the next claimable run of the saver's project and session
  // (claim_next_run) and carries it on: resumes it when its tasks are
  // settled, parks it again when some are not.  Null when there is none.
  async runOnce() {
    const { project, session, worklist } = this.saver;
    const at = Date.now();
    const claimed = await worklist.claimNextRun(project, this.holder, this.ttlMs, { session });
    if (claimed === null) return null;
    const lease = await this.saver.lease(claimed.run, { holder: this.holder, ttlMs: this.ttlMs, claimed, claimedAt: at });
    this.emit('claimed', { thread: claimed.run, fence: claimed.fence });
    return this.drive(claimed.run, lease, undefined);
  }

  // The loop: runOnce until `signal` aborts.  While there is nothing to
  // do it waits for the tenant's notifications on a connection of its own
  // (a park resolved, a lease released: the run may be claimable) or
  // pollMs, whichever comes first (lease and park deadlines passing are
  // not notified).  A lost lease or a concluded run ends that step
  // ('lost'); a connection lost (a server restart) is waited out, then it
  // listens again; another error of a step is reported ('failed'), its
  // lease released, and the loop goes on.
  async run({ signal } = {}) {
    let failures = 0;
    let listener = null;
    try {
      while (!signal?.aborted) {
        try {
          if (listener === null || listener.broken) {
            listener?.close();
            listener = null;
            listener = await this.listen();
          }
          listener.pending = false;
          const done = await this.runOnce();
          failures = 0;
          if (done === null) await listener.wait(this.pollMs, signal);
        } catch (err) {
          if (isTransient(err)) {
            failures += 1;
            this.emit('connection_lost', { error: err });
            await sleep(backoff(failures), signal);
          } else if (err instanceof StaleFenceError || err instanceof RunConcludedError) {
            this.emit('lost', { thread: err.thread, error: err });
          } else {
            this.emit('failed', { thread: err.thread, error: err });
            await sleep(backoff(1), signal);
          }
        }
      }
    } finally {
      listener?.close();
    }
  }

  // LISTEN on the tenant's channel, on a connection of the saver's pool.
  async listen() {
    const wl = this.saver.worklist;
    const client = await wl.connect();
    const listener = {
      pending: false,
      broken: false,
      wake: () => {},
      // pollMs, or less: a notification, the connection's end, `signal`
      wait(ms, signal) {
        if (this.pending || this.broken) return Promise.resolve();
        const woken = new AbortController();
        this.wake = () => woken.abort();
        return sleep(ms, signal ? AbortSignal.any([signal, woken.signal]) : woken.signal)
          .finally(() => { this.wake = () => {}; });
      },
      close() {
        client.removeListener('notification', onNotification);
        client.removeListener('end', onEnd);
        client.release(listener.broken || undefined);
      },
    };
    const onNotification = (msg) => {
      let payload;
      try {
        payload = JSON.parse(msg.payload);
      } catch {
        return;
      }
      const run = payload.run || {};
      if (run.resumed || run.released || payload.rotated) {
        listener.pending = true;
        listener.wake();
      }
    };
    const onEnd = () => {
      listener.broken = true;
      listener.wake();
    };
    client.on('notification', onNotification);
    client.on('end', onEnd);
    try {
      const channel = await wl.on(client).channel();
      await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
    } catch (err) {
      listener.broken = true;
      listener.close();
      throw fromDriver(err);
    }
    this.emit('listening', {});
    return listener;
  }

  async drive(threadId, lease, input) {
    const config = {
      ...this.config,
      configurable: { ...this.config.configurable, thread_id: threadId },
      signal: lease.signal,
    };
    let ended = false;
    try {
      let next = input; // undefined: look at the thread first
      for (;;) {
        if (next !== undefined) await this.graph.invoke(next, config);
        const state = await this.graph.getState(config);
        const interrupts = state.tasks.flatMap((t) => t.interrupts ?? []);
        if (interrupts.length === 0) {
          if (state.next.length === 0 && state.config?.configurable?.checkpoint_id) {
            await this.saver.fenced(threadId, `thread ${threadId}`, async (fence) => {
              await this.saver.worklist.concludeRun(this.saver.project, this.saver.session, threadId, { fence });
              lease.stop(); // ended by the server: no renewal may come after
            });
            ended = true;
            await lease.end();
            this.emit('finished', { thread: threadId, values: state.values });
            return { thread: threadId, status: 'finished', values: state.values };
          }
          // stopped between steps (a worker gone in the middle): go on
          if (next === null) throw new InvalidConfigError(`thread ${threadId} stopped without an interrupt as a task`);
          next = null;
          continue;
        }
        const tasks = await this.openTasks(threadId, interrupts);
        if (tasks.some((t) => !SETTLED.has(t.state))) {
          const checkpointId = state.config.configurable.checkpoint_id;
          await this.saver.fenced(threadId, `the park of thread ${threadId}`, async (fence) => {
            await this.saver.query('park', PARK,
              [this.saver.project, this.saver.session, threadId, checkpointId, tasks.map((t) => t.id), fence, this.parkRequest]);
            lease.stop();
          });
          ended = true;
          await lease.end();
          this.emit('parked', { thread: threadId, tasks });
          return { thread: threadId, status: 'parked', tasks };
        }
        const answers = tasks.map(outcome);
        const resume = interrupts.every((i) => typeof i.id === 'string')
          ? Object.fromEntries(interrupts.map((i, k) => [i.id, answers[k]]))
          : answers[0];
        this.emit('resuming', { thread: threadId, tasks });
        next = new Command({ resume });
      }
    } catch (err) {
      if (err && typeof err === 'object' && err.thread === undefined) err.thread = threadId;
      throw err;
    } finally {
      if (!ended) await lease.release().catch(() => {});
    }
  }

  // One task per interrupt, opened (or found: open_task returns an existing
  // task unchanged) as the interrupt's spec says.
  async openTasks(threadId, interrupts) {
    const wl = this.saver.worklist;
    const tasks = [];
    for (const i of interrupts) {
      const spec = i.value && typeof i.value === 'object' ? i.value[TASK_KEY] : undefined;
      if (!spec) throw new InvalidConfigError(`thread ${threadId}: an interrupt that is not an interruptAsTask (${i.id})`);
      const id = interruptTaskId(threadId, i.id, spec);
      tasks.push(await wl.openTask(id, spec.caseId ?? threadId, spec.roles, {
        run_id: threadId,
        payload: spec.payload,
        priority: spec.priority,
        due_at: spec.dueAt,
        expiry_policy: spec.expiryPolicy,
        excluded: spec.excluded,
        escalation_roles: spec.escalationRoles,
        claim_timeout: spec.claimTimeout,
      }));
    }
    return tasks;
  }
}
