// Runs: a lease that renews itself, and (0.4) a worker that takes runs
// from the queue of a project.
//
// RunLease holds one run under claim_run: it renews the lease after a
// fraction of its ttl (a renewal mints a new fence), writes checkpoints
// with the fence in hand, and releases.  Its calls go one at a time, so a
// write never carries the fence a renewal in flight is replacing.
//
// RunWorker (0.4: claim_next_run, park_run, conclude_run) claims the next
// claimable run of a project, hands it to a handler with the run's newest
// checkpoint (and, when it was parked on tasks, those tasks, settled) and
// keeps its lease renewed while the handler works.  The handler writes
// checkpoints, parks the run on tasks (a person's decision) or returns;
// a run whose handler returns without parking is concluded.  When the
// lease is lost (a renewal refused, WL007) or the run concluded under it
// (WL008), the handler's signal aborts and its writes fail: the step stops.

import { RunConcludedError, StaleFenceError, isTransient } from './errors.js';
import { backoff, processSignal, sleep } from './wait.js';

function ttlMs(ttl) {
  if (typeof ttl !== 'number' || !(ttl > 0)) throw new TypeError('ttl must be a positive number of milliseconds');
  return ttl;
}

export class RunLease {
  constructor(worklist, { project, session, run, holder, ttl, renewFraction = 0.5 }) {
    this.worklist = worklist;
    this.address = [project, session, run];
    this.holder = holder;
    this.ttl = ttlMs(ttl);
    this.renewFraction = renewFraction;
    this.fence = null;     // BigInt: the fence of the lease in hand
    this.claimedAt = null; // Date.now() when it was taken or renewed
    this.tail = Promise.resolve();
  }

  // One call at a time, in the order asked.
  exclusive(fn) {
    const next = this.tail.then(fn);
    this.tail = next.catch(() => {});
    return next;
  }

  // Takes (or renews) the lease; false when another holder has an
  // unexpired one.
  claim() {
    return this.exclusive(async () => {
      const at = Date.now();
      const lease = await this.worklist.claimRun(...this.address, this.holder, this.ttl);
      if (lease === null) return false;
      this.fence = lease.fence;
      this.claimedAt = at;
      return true;
    });
  }

  // A fenced lease taken by claim_next_run.
  adopt(fence, at = Date.now()) {
    this.fence = fence;
    this.claimedAt = at;
  }

  get due() {
    return this.fence === null || Date.now() - this.claimedAt >= this.ttl * this.renewFraction;
  }

  // Renews when a fraction of the ttl has passed; false when the lease is
  // lost to another holder.
  async renewIfDue() {
    if (!this.due) return true;
    return this.claim();
  }

  // write_checkpoint with the fence in hand (WL007 once another holder
  // has claimed the run since).
  write(checkpointId, body, options = {}) {
    return this.exclusive(() => this.worklist.writeCheckpoint(...this.address, checkpointId, body,
      { ...options, fence: this.fence }));
  }

  // A call of the caller's with the fence in hand: fn(fence).
  fenced(fn) {
    return this.exclusive(() => fn(this.fence));
  }

  // Gives the lease up (with a stale fence, nothing happens).
  release() {
    return this.exclusive(async () => {
      if (this.fence !== null) await this.worklist.releaseRun(...this.address, this.fence);
    });
  }
}

export class RunWorker {
  constructor(worklist, {
    project, session = null, holder, handler, ttl = 30000, renewFraction = 0.5, pollMs = 5000,
    graceMs = 30000, onEvent = () => {},
  }) {
    if (typeof handler !== 'function') throw new TypeError('RunWorker: `handler` must be a function');
    this.worklist = worklist;
    this.project = project;
    this.session = session;
    this.holder = holder;
    this.handler = handler;
    this.ttl = ttlMs(ttl);
    this.renewFraction = renewFraction;
    this.pollMs = pollMs;
    this.graceMs = graceMs;
    this.emit = onEvent;
  }

  async run({ signal } = {}) {
    const own = signal ? null : processSignal();
    this.signal = signal || own.signal;
    let failures = 0;
    try {
      while (!this.signal.aborted) {
        let client = null;
        try {
          client = await this.worklist.connect();
          failures = 0;
          this.emit('connected', {});
          await this.serve(client);
          client.release();
        } catch (err) {
          if (client) client.release(true);
          if (!isTransient(err)) throw err;
          failures += 1;
          this.emit('connection_lost', { error: err });
          await sleep(backoff(failures), this.signal);
        }
      }
    } finally {
      if (own) own.dispose();
    }
    this.emit('stopped', {});
  }

  async serve(client) {
    const wl = this.worklist.on(client);
    let wake = null;
    let pending = false;
    const onNotification = (msg) => {
      let payload;
      try {
        payload = JSON.parse(msg.payload);
      } catch {
        return;
      }
      const run = payload.run || {};
      if (run.resumed || run.released || run.checkpointed || payload.rotated) pending = true;
      if (pending && wake) wake();
    };
    const onError = () => {};
    client.on('error', onError);
    client.on('notification', onNotification);
    try {
      const channel = await wl.channel();
      await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
      this.emit('listening', { channel });
      while (!this.signal.aborted) {
        pending = false;
        const claimed = await wl.claimNextRun(this.project, this.holder, this.ttl, { session: this.session });
        if (claimed) {
          await this.step(wl, claimed);
          continue;
        }
        await new Promise((resolve) => {
          const done = () => {
            clearTimeout(timer);
            wake = null;
            this.signal.removeEventListener('abort', done);
            resolve();
          };
          const timer = setTimeout(done, this.pollMs);
          wake = done;
          this.signal.addEventListener('abort', done, { once: true });
          if (pending) done();
        });
      }
      await client.query('UNLISTEN *');
    } finally {
      client.removeListener('error', onError);
      client.removeListener('notification', onNotification);
    }
  }

  // One claimed run through the handler.
  async step(wl, claimed) {
    const { project, session, run } = claimed;
    const lease = new RunLease(wl, { project, session, run, holder: this.holder, ttl: this.ttl, renewFraction: this.renewFraction });
    lease.adopt(claimed.fence);
    this.emit('claimed', { run: claimed });
    const lost = new AbortController();
    let outcome = null; // 'parked' | 'concluded'
    const guard = async (promise) => {
      try {
        return await promise;
      } catch (err) {
        if (err instanceof StaleFenceError || err instanceof RunConcludedError) lost.abort(err);
        throw err;
      }
    };
    const renewal = setInterval(() => {
      lease.claim().then((held) => {
        if (!held) lost.abort(new StaleFenceError(`lease of run "${run}" lost`, {}));
        else this.emit('renewed', { run: claimed, fence: lease.fence });
      }, (err) => {
        if (!isTransient(err)) lost.abort(err);
      });
    }, this.ttl * this.renewFraction);
    try {
      const checkpoints = await wl.listCheckpoints(project, session, run);
      const checkpoint = checkpoints.length ? checkpoints[checkpoints.length - 1] : null;
      const awaited = checkpoint && checkpoint.park_tasks ? checkpoint.park_tasks : [];
      const tasks = [];
      for (const id of awaited) tasks.push(await wl.task(id));
      const ctx = {
        run: claimed,
        checkpoint,
        tasks,
        signal: lost.signal,
        stopping: this.signal,
        get fence() {
          return lease.fence;
        },
        write: (checkpointId, body, options) => guard(lease.write(checkpointId, body, options)),
        park: (checkpointId, taskIds, options = {}) => guard(lease.fenced(async (fence) => {
          const c = await wl.parkRun(project, session, run, checkpointId, taskIds, { ...options, fence });
          outcome = 'parked';
          return c;
        })),
        conclude: () => guard(lease.fenced(async (fence) => {
          const n = await wl.concludeRun(project, session, run, { fence });
          outcome = 'concluded';
          return n;
        })),
      };
      try {
        await this.handler(ctx);
      } catch (err) {
        if (lost.signal.aborted || err instanceof StaleFenceError || err instanceof RunConcludedError) {
          this.emit('lost', { run: claimed, error: lost.signal.reason || err });
          return;
        }
        if (isTransient(err)) throw err;
        this.emit('failed', { run: claimed, error: err });
        await lease.release();
        await sleep(backoff(1), this.signal);
        return;
      }
      if (lost.signal.aborted) {
        this.emit('lost', { run: claimed, error: lost.signal.reason });
        return;
      }
      if (outcome === null) {
        await ctx.conclude();
      }
      this.emit(outcome, { run: claimed });
    } finally {
      clearInterval(renewal);
    }
  }
}
