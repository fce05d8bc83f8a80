// worklist.js — what worker.js and agent.js share: a connection that sets
// the tenant, reconnects with backoff, and tells what each error means.
//
// The connection comes from the standard libpq environment variables
// (PGHOST, PGPORT, PGDATABASE, PGUSER, PGPASSWORD), which the pg module
// reads by itself.
'use strict';

const pg = require('pg');

// Exit statuses shared by both programs.
const EXIT_FATAL = 1;     // an error no retry can fix (a bug, a bad argument)
const EXIT_CONFIG = 78;   // this login may not work in this tenant, or no such database
const EXIT_LEASE_LOST = 75; // agent: another holder has the run

// What to do about an error.  Errors from the server carry a SQLSTATE;
// errors without one come from the socket (refused, reset, closed).
//   'retry'      the transaction lost a race: run the same call again
//   'reconnect'  the connection is gone or the server is restarting
//   'config'     fix the set-up (binding, role, database); retrying won't help
//   'fatal'      a bug or a bad argument
// The extension's own refusals (WL001..WL007) are answers, not failures:
// each program handles the ones its calls can meet before asking here.
function classify(err) {
  if (err instanceof pg.DatabaseError) {
    const code = err.code || '';
    if (code === '40001' || code === '40P01') return 'retry';
    if (code.startsWith('08') || ['57P01', '57P02', '57P03', '53300'].includes(code)) {
      return 'reconnect';
    }
    // 42501: the login reaches no binding of the tenant (closed tenancy);
    // 28xxx: authentication; 3D000: no such database; 3F000/42883/55000:
    // the extension is missing or older than these calls.
    if (code === '42501' || code.startsWith('28') ||
        ['3D000', '3F000', '42883', '55000'].includes(code)) {
      return 'config';
    }
    return 'fatal';
  }
  if (err instanceof TypeError || err instanceof RangeError ||
      err instanceof ReferenceError || err instanceof SyntaxError) {
    return 'fatal';
  }
  return 'reconnect';
}

function describe(err, client) {
  // "Client ... is not queryable": the reason came earlier, on the client.
  if (client && client.lastError && !(err instanceof pg.DatabaseError)) err = client.lastError;
  const code = err.code ? ` [${err.code}]` : '';
  const detail = err.detail ? ` (${err.detail})` : '';
  return `${err.message}${code}${detail}`;
}

// Sleeps that end early when the program is asked to stop.
class Stopper {
  constructor() {
    this.requested = false;
    this.waiters = new Set();
  }

  request() {
    this.requested = true;
    for (const wake of this.waiters) wake();
    this.waiters.clear();
  }

  // Resolves after ms milliseconds, or at once on a stop request.
  sleep(ms) {
    if (this.requested) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
    });
  }
}

// 250 ms, 500 ms, 1 s, ... up to 10 s, each with up to half of it shaved off
// at random so that many clients do not come back in step.
function backoff(failures) {
  const ms = Math.min(10000, 250 * 2 ** Math.min(failures - 1, 10));
  return Math.round(ms * (0.5 + Math.random() / 2));
}

// Opens a connection and sets worklist.tenant for the session.  A new
// connection starts with the default tenant, so this runs after every
// reconnect.  Retries with backoff while the server cannot be reached;
// returns null if a stop is requested meanwhile.  `failures` counts the
// failed attempts in a row (and broken sessions) that precede this call.
async function connect({ tenant, applicationName, stopper, log, failures = 0 }) {
  for (;;) {
    if (failures > 0) {
      await stopper.sleep(backoff(failures));
    }
    if (stopper.requested) return null;
    const client = new pg.Client({ application_name: applicationName });
    // Without a listener, an error on an idle connection (the server
    // shutting down) would end the process.  The next query fails and is
    // handled there; the error is kept to say why.
    client.on('error', (err) => {
      client.lastError = err;
    });
    try {
      await client.connect();
      await client.query("SELECT pg_catalog.set_config('worklist.tenant', $1, false)", [tenant]);
      return client;
    } catch (err) {
      client.end().catch(() => {});
      if (classify(err) !== 'reconnect') throw err;
      failures += 1;
      log(`cannot connect: ${describe(err)}; retrying`);
    }
  }
}

// Runs one statement, again after a serialization failure or deadlock
// (40001, 40P01).  Every verb is one statement in its own transaction,
// so running it again is safe.
async function call(client, text, values) {
  for (let attempt = 1; ; attempt++) {
    try {
      return (await client.query(text, values)).rows;
    } catch (err) {
      if (classify(err) !== 'retry' || attempt >= 5) throw err;
      await new Promise((resolve) => setTimeout(resolve, 20 * attempt * (1 + Math.random())));
    }
  }
}

module.exports = {
  EXIT_CONFIG, EXIT_FATAL, EXIT_LEASE_LOST, Stopper, call, classify, connect, describe,
};
