// TaskWorker: claims the tasks of one actor and hands each to a handler
// that returns the decision; completes it; and never asks the handler
// twice for a decision it already made.
//
// On one connection of its own it LISTENs on the tenant's channel (and
// polls as well, since notifications can be lost while work is not), and
// claims with claim_next.  A decision is kept until the server has
// answered its completion: when the connection breaks, the worker
// reconnects with backoff, asks held() what this actor still holds, and
// sends each known decision again (a retried complete converges: true
// again when it was ours), handing to the handler only the tasks whose
// decision it does not know.  On stop it releases the claims whose handler
// has not started and lets the handler in progress finish (for graceMs).

import {
  AlreadyClaimedError, ExcludedError, NotFoundError, NotHeldError, NotPendingError, isTransient,
} from './errors.js';
import { backoff, processSignal, sleep } from './wait.js';

export class TaskWorker {
  constructor(worklist, {
    actor, roles, handler, pollMs = 5000, skipMs = 60000, graceMs = 30000, onEvent = () => {},
  }) {
    if (typeof handler !== 'function') throw new TypeError('TaskWorker: `handler` must be a function');
    this.worklist = worklist;
    this.actor = actor;
    this.roles = roles;
    this.handler = handler;
    this.pollMs = pollMs;
    this.skipMs = skipMs;
    this.graceMs = graceMs;
    this.emit = onEvent;
    this.handlerCalls = 0;  // how often the handler was called
    this.decided = new Map(); // id -> decision whose completion is unanswered
    this.backlog = [];        // tasks held, their handler not started
    this.skip = new Map();    // id -> until (ms): not to be claimed again before
    this.channel = null;
  }

  // Works until `signal` aborts (by default: SIGTERM or SIGINT).  Resolves
  // once stopped; rejects on a permanent error (a binding missing, a bug).
  async run({ signal } = {}) {
    if (signal) return this.work(signal);
    const own = processSignal();
    try {
      return await this.work(own.signal);
    } finally {
      own.dispose();
    }
  }

  async work(signal) {
    this.signal = signal;
    let failures = 0;
    let stoppedAt = null;
    for (;;) {
      if (signal.aborted) {
        stoppedAt ??= Date.now();
        if (this.decided.size === 0 || Date.now() - stoppedAt >= this.graceMs) break;
      }
      let client = null;
      try {
        client = await this.worklist.connect();
        failures = 0;
        this.emit('connected', {});
        await this.serve(client);
        client.release();
        break;
      } catch (err) {
        if (client) client.release(true);
        if (!isTransient(err)) throw err;
        failures += 1;
        this.emit('connection_lost', { error: err });
        await sleep(backoff(failures), signal.aborted ? undefined : signal);
      }
    }
    for (const id of this.decided.keys()) this.emit('unfinished', { id });
    this.emit('stopped', {});
  }

  async serve(client) {
    const wl = this.worklist.on(client);
    const state = { closed: false, wake: null, pending: false, resubscribe: false };
    const onEnd = () => {
      state.closed = true;
      if (state.wake) state.wake('closed');
    };
    const onNotification = (msg) => {
      let payload;
      try {
        payload = JSON.parse(msg.payload);
      } catch {
        return;
      }
      // Only tasks that became claimable are worth a look; {"rotated":
      // true}: an admin replaced the channel.
      if (payload.rotated) state.resubscribe = true;
      const task = payload.task || {};
      if (task.opened || task.released || task.escalated) state.pending = true;
      if ((state.pending || state.resubscribe) && state.wake) state.wake('notification');
    };
    // An error of the connection while no query runs would end the
    // process without a listener; the next query reports it.
    const onError = () => {};
    client.on('error', onError);
    client.on('end', onEnd);
    client.on('notification', onNotification);
    try {
      this.skipSupported = await wl.hasClaimNextSkip();
      await this.subscribe(wl, client);
      state.resubscribe = false;
      await this.recover(wl);
      while (!this.signal.aborted) {
        if (state.resubscribe) {
          state.resubscribe = false;
          await this.subscribe(wl, client);
        }
        let task = this.backlog.shift();
        if (!task) {
          state.pending = false;
          task = await this.claim(wl);
          if (task) this.emit('claimed', { id: task.id, task });
        }
        if (task) {
          await this.handle(wl, task);
          continue;
        }
        const why = await this.waitForWork(state);
        if (why === 'notification' || why === 'poll') this.emit('woken', { why });
      }
      // Stopping: what the handler has not started goes back to the queue.
      while (this.backlog.length) {
        await this.release(wl, this.backlog[0].id);
        this.backlog.shift();
      }
      await client.query('UNLISTEN *');
    } finally {
      client.removeListener('error', onError);
      client.removeListener('end', onEnd);
      client.removeListener('notification', onNotification);
    }
  }

  // LISTEN before looking at the queue, so that nothing opened in between
  // goes unnoticed.
  async subscribe(wl, client) {
    const old = this.channel;
    this.channel = await wl.channel();
    if (old && old !== this.channel) await client.query(`UNLISTEN ${client.escapeIdentifier(old)}`);
    await client.query(`LISTEN ${client.escapeIdentifier(this.channel)}`);
    this.emit('listening', { channel: this.channel });
  }

  // After every (re)connect, before any new work.  held() is the server's
  // word on what this actor holds: a task whose decision is known goes
  // straight to complete, the others to the handler.  A decision whose
  // task is not held any more is sent again too: its answer tells whether
  // it went through (true) or somebody else settled the task (false).
  async recover(wl) {
    const held = await wl.held(this.actor, { lim: 1000 });
    const heldIds = new Set(held.map((t) => t.id));
    this.backlog = [];
    for (const task of held) {
      this.emit('recovered', { id: task.id, task });
      if (!this.decided.has(task.id)) this.backlog.push(task);
    }
    for (const [id, decision] of [...this.decided]) {
      this.emit('resending', { id, held: heldIds.has(id) });
      await this.sendCompletion(wl, id, decision);
    }
  }

  async claim(wl) {
    const now = Date.now();
    for (const [id, until] of this.skip) if (until <= now) this.skip.delete(id);
    if (this.skip.size === 0) return wl.claimNext(this.actor, this.roles);
    const skip = [...this.skip.keys()];
    if (this.skipSupported) return wl.claimNext(this.actor, this.roles, { skip });
    // A server without claim_next's skip (before 0.4): the queue, less the
    // tasks to skip, claimed one at a time.
    const queue = await wl.queue(this.roles, { lim: Math.min(1000, skip.length + 10), actor: this.actor });
    for (const t of queue) {
      if (this.skip.has(t.id)) continue;
      try {
        return await wl.claim(t.id, this.actor, this.roles);
      } catch (err) {
        if (!(err instanceof AlreadyClaimedError || err instanceof NotPendingError || err instanceof NotFoundError)) throw err;
      }
    }
    return null;
  }

  async handle(wl, task) {
    let decision = this.decided.get(task.id);
    if (decision === undefined) {
      this.handlerCalls += 1;
      try {
        decision = await this.withGrace(this.handler(task, { signal: this.signal, worklist: wl }));
      } catch (err) {
        if (err === ABANDONED) {
          this.emit('abandoned', { id: task.id });
          return;
        }
        this.emit('failed', { id: task.id, error: err });
        this.skip.set(task.id, Date.now() + this.skipMs);
        await this.release(wl, task.id);
        return;
      }
      if (decision === undefined || decision === null) {
        // No decision: the handler gave the task up (or was stopped).
        if (!this.signal.aborted) this.skip.set(task.id, Date.now() + this.skipMs);
        await this.release(wl, task.id);
        return;
      }
      this.decided.set(task.id, decision);
    }
    await this.sendCompletion(wl, task.id, decision);
  }

  // The handler in progress when the worker is stopped has graceMs to
  // finish; after that its task is left held (its claim timeout, or this
  // actor's next start, brings it back).
  withGrace(promise) {
    if (this.signal.aborted && this.graceMs <= 0) return promise;
    return new Promise((resolve, reject) => {
      let timer = null;
      const onAbort = () => {
        timer = setTimeout(() => reject(ABANDONED), this.graceMs);
      };
      if (this.signal.aborted) onAbort();
      else this.signal.addEventListener('abort', onAbort, { once: true });
      promise.then(resolve, reject).finally(() => {
        clearTimeout(timer);
        this.signal.removeEventListener('abort', onAbort);
      });
    });
  }

  // complete(), whose answer settles what to do with the decision: true,
  // completed by this actor (by this call or an earlier one whose answer
  // was lost); false, somebody else settled it; WL006, the claim was taken
  // (a take-over, a claim timeout); WL001/WL002, the task is gone or barred.
  // A transient error keeps the decision for the next connection.
  async sendCompletion(wl, id, decision) {
    let settled;
    try {
      settled = await wl.complete(id, this.actor, decision);
    } catch (err) {
      if (err instanceof NotHeldError || err instanceof NotFoundError || err instanceof ExcludedError) {
        this.decided.delete(id);
        this.emit('lost', { id, error: err });
        return;
      }
      throw err;
    }
    this.decided.delete(id);
    if (settled) this.emit('completed', { id, decision });
    else this.emit('lost', { id, error: null });
  }

  async release(wl, id) {
    try {
      await wl.release(id, this.actor);
    } catch (err) {
      // not ours any more, or an earlier release already went through
      if (!(err instanceof NotHeldError || err instanceof NotFoundError)) throw err;
    }
    this.emit('released', { id });
  }

  // Resolves with 'notification', 'poll', 'stop' or 'closed' (the server
  // went away; the next query says why).
  waitForWork(state) {
    if (this.signal.aborted) return Promise.resolve('stop');
    if (state.closed) return Promise.resolve('closed');
    if (state.pending || state.resubscribe) return Promise.resolve('notification');
    return new Promise((resolve) => {
      const done = (why) => {
        clearTimeout(timer);
        state.wake = null;
        this.signal.removeEventListener('abort', onStop);
        resolve(why);
      };
      const onStop = () => done('stop');
      const timer = setTimeout(() => done('poll'), this.pollMs);
      state.wake = done;
      this.signal.addEventListener('abort', onStop, { once: true });
    });
  }
}

const ABANDONED = Symbol('abandoned');
