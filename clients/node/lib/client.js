// Worklist: the verbs of one tenant, over a pg.Pool (or one connection).

import pg from 'pg';
import { fromDriver, SerializationError } from './errors.js';
import { VERBS, result, statement, typeParsers } from './sql.js';

const TYPES = typeParsers(pg.types);
const LISTENED = new WeakSet();

export class Worklist {
  // new Worklist({ tenant, pool })  -- a pg.Pool of the caller's
  // new Worklist({ tenant, ...config }) -- a pg.Pool of its own, made from
  //   pg's connection config (host, database, connectionString, max, ...;
  //   the PG* environment variables fill in the rest)
  //
  // prepare: true prepares each statement once per connection (named
  // statements), which saves its planning on every later call; leave it
  // off behind a transaction-mode pooler that does not track prepared
  // statements.
  constructor({ tenant, pool, prepare = false, ...config } = {}) {
    if (typeof tenant !== 'string' || tenant === '') {
      throw new TypeError('Worklist: `tenant` must be a non-empty string');
    }
    this.tenant = tenant;
    this.prepare = prepare;
    this.ownPool = !pool;
    this.pool = pool || new pg.Pool(config);
    if (this.ownPool) {
      // An idle connection the server closes is dropped by the pool; the
      // error needs a listener or it would end the process.
      this.pool.on('error', () => {});
    }
    this.client = null; // set on the Worklist of one connection (on(), transaction())
    this.inTransaction = false;
    this.retries = 3;
  }

  // The same tenant, on one connection of the caller's (a pg.Client, or a
  // client from pool.connect()).  Nothing is retried there.
  on(client) {
    const wl = Object.create(Worklist.prototype);
    Object.assign(wl, this, { client, inTransaction: false, retries: 0, ownPool: false });
    return wl;
  }

  // A dedicated connection (from the pool), for LISTEN and the worker
  // loops.  release() it when done: release(true) discards it.
  async connect() {
    let client;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw fromDriver(err);
    }
    // An error of the connection while no query runs (the server going
    // away) would end the process without a listener; the next query
    // reports it.
    if (!LISTENED.has(client)) {
      LISTENED.add(client);
      client.on('error', () => {});
    }
    return client;
  }

  // Runs fn(tx) in one transaction, on one connection, with the tenant set
  // once for the whole transaction (BEGIN and set_config in one round
  // trip); commits when fn returns, rolls back when it throws.
  async transaction(fn) {
    const own = this.client === null;
    const client = own ? await this.connect() : this.client;
    const tx = this.on(client);
    tx.inTransaction = true;
    const send = async (text) => {
      try {
        await client.query(text);
      } catch (err) {
        throw fromDriver(err);
      }
    };
    let broken = null;
    try {
      await send(`BEGIN; SELECT pg_catalog.set_config('worklist.tenant', ${client.escapeLiteral(this.tenant)}, true)`);
      const value = await fn(tx);
      await send('COMMIT');
      return value;
    } catch (err) {
      try {
        await client.query('ROLLBACK');
      } catch (rollbackError) {
        broken = rollbackError;
      }
      throw err;
    } finally {
      if (own) client.release(broken || undefined);
    }
  }

  async end() {
    if (this.ownPool) await this.pool.end();
  }

  // One verb: one statement.  A serialization failure or deadlock outside
  // a transaction (the statement alone was rolled back) is retried.
  async call(verb, given) {
    const { text, name, values } = statement(verb, given, this.inTransaction ? null : this.tenant);
    const query = { text, values, types: TYPES };
    if (this.prepare) query.name = name;
    const target = this.client || this.pool;
    for (let attempt = 0; ; attempt++) {
      let rows;
      try {
        ({ rows } = await target.query(query));
      } catch (raw) {
        const err = fromDriver(raw);
        if (err instanceof SerializationError && attempt < this.retries) {
          await new Promise((resolve) => setTimeout(resolve, 10 * 2 ** attempt * (1 + Math.random())));
          continue;
        }
        throw err;
      }
      return result(verb, rows);
    }
  }

  // The capabilities of the server: which optional arguments it knows.
  async hasClaimNextSkip() {
    const { rows } = await (this.client || this.pool).query(
      `SELECT EXISTS (SELECT FROM pg_catalog.pg_proc
                       WHERE proname = 'claim_next' AND pronargs = 3
                         AND pronamespace = 'worklist'::pg_catalog.regnamespace) AS skip`);
    return rows[0].skip;
  }
}

// One method per verb: the required arguments positionally, in the
// contract's order, then an object of the optional ones under the
// contract's names.
for (const [method, [, args, required]] of Object.entries(VERBS)) {
  Object.defineProperty(Worklist.prototype, method, {
    value: function verb(...positional) {
      const given = {};
      for (let i = 0; i < required; i++) given[args[i][0]] = positional[i];
      const options = positional[required];
      if (options !== undefined && options !== null) {
        if (typeof options !== 'object' || Array.isArray(options)) {
          return Promise.reject(new TypeError(`${method}: the argument after the ${required} required ones must be an object of options`));
        }
        const known = new Set(args.slice(required).map(([a]) => a));
        for (const [k, v] of Object.entries(options)) {
          if (!known.has(k)) return Promise.reject(new TypeError(`${method}: unknown option "${k}"`));
          given[k] = v;
        }
      }
      if (positional.length > required + 1) {
        return Promise.reject(new TypeError(`${method}: too many arguments`));
      }
      return this.call(method, given);
    },
    writable: true,
    configurable: true,
  });
}
