// The lease of one thread (its worklist run) held by a WorklistSaver.
//
// claim_run takes it and mints a fence; a timer renews it every
// renewFraction of its ttl (each renewal mints a new fence).  Renewals and
// the saver's writes of the thread go one at a time, so a write never
// carries a fence that a renewal in flight is replacing.
//
// A lease is renewed only while it has not run out by this process's clock
// (with a fifth of the ttl to spare): once it may have expired, another
// worker may have claimed the thread, written, and released it, and a
// renewal would hand this worker a fresh fence over state it has not seen.
// So a lapsed lease is never renewed; the saver's writes go on carrying its
// fence, and the server refuses them (WL007) as soon as anybody else has
// claimed the thread.  When a write is refused, or a renewal finds another
// holder, the lease is lost: `signal` aborts (pass it to the graph's
// invoke/stream to stop it) with the error as its reason.

import { StaleFenceError } from 'worklist';

export class LeaseLostError extends StaleFenceError {
  constructor(run, holder) {
    super(`lease of thread "${run}" lost: another holder has claimed it`, { code: 'WL007' });
    this.name = 'LeaseLostError';
    this.run = run;
    this.holder = holder;
  }
}

export class ThreadLease {
  constructor(saver, run, { holder, ttlMs, renewFraction }) {
    if (typeof holder !== 'string' || holder === '') throw new TypeError('lease: `holder` must be a non-empty string');
    if (typeof ttlMs !== 'number' || !(ttlMs > 0)) throw new TypeError('lease: `ttlMs` must be a positive number');
    if (!(renewFraction > 0 && renewFraction < 0.8)) throw new TypeError('lease: `renewFraction` must be in (0, 0.8)');
    this.saver = saver;
    this.threadId = run;
    this.holder = holder;
    this.ttlMs = ttlMs;
    this.renewFraction = renewFraction;
    this.fence = null;      // BigInt
    this.claimedAt = null;  // Date.now() just before the claim was sent
    this.expiresAt = null;  // Date, the server's
    this.renewals = 0;
    this.controller = new AbortController();
    this.timer = null;
    this.tail = Promise.resolve();
    this.onEnd = () => {};
  }

  get signal() {
    return this.controller.signal;
  }

  get isLost() {
    return this.controller.signal.aborted;
  }

  // true while the lease cannot have run out, by this process's clock
  get live() {
    return this.claimedAt !== null && !this.isLost && Date.now() < this.claimedAt + this.ttlMs * 0.8;
  }

  exclusive(fn) {
    const next = this.tail.then(fn);
    this.tail = next.catch(() => {});
    return next;
  }

  fenced(fn) {
    return this.exclusive(() => {
      if (this.isLost) throw this.signal.reason;
      return fn(this.fence);
    });
  }

  async claim() {
    const { project, session, worklist } = this.saver;
    const at = Date.now();
    const row = await worklist.claimRun(project, session, this.threadId, this.holder, this.ttlMs);
    if (row === null) return false;
    this.fence = row.fence;
    this.claimedAt = at;
    this.expiresAt = row.expires_at;
    if (this.timer === null) {
      this.timer = setInterval(() => this.renew(), this.ttlMs * this.renewFraction);
      this.timer.unref?.();
    }
    return true;
  }

  // A lease claim_next_run took (a worklist.claimed_run row), its claim
  // sent at `at` by this process's clock: renewed from then on as claim()
  // would.
  adopt(claimed, at) {
    this.fence = claimed.fence;
    this.claimedAt = at;
    this.expiresAt = claimed.expires_at;
    this.timer = setInterval(() => this.renew(), this.ttlMs * this.renewFraction);
    this.timer.unref?.();
  }

  renew() {
    return this.exclusive(async () => {
      if (this.isLost || this.timer === null) return;
      if (!this.live) {
        // lapsed: never renewed (see above); writes keep the fence in hand
        this.stop();
        return;
      }
      try {
        if (await this.claim()) this.renewals += 1;
        else this.lost(new LeaseLostError(this.threadId, this.holder));
      } catch (err) {
        // a transient failure: the next tick tries again while the lease is live
        if (!err.transient) this.lost(err);
      }
    });
  }

  // Lost: the saver keeps the lease (until release), so every later write
  // of the thread is refused too, without a round trip.
  lost(err) {
    this.stop();
    if (!this.isLost) this.controller.abort(err);
  }

  stop() {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  // The server ended the lease (park_run, conclude_run): no renewal, no
  // release; the saver forgets it.
  end() {
    this.stop();
    return this.exclusive(() => this.onEnd());
  }

  // Gives the lease up (release_run; with a stale fence nothing happens).
  release() {
    this.stop();
    return this.exclusive(async () => {
      this.onEnd();
      const { project, session, worklist } = this.saver;
      if (this.fence !== null) await worklist.releaseRun(project, session, this.threadId, this.fence);
    });
  }
}
