// WorklistSaver: a LangGraph checkpointer written on the run verbs of
// worklist (README.md, "The mapping").
//
//   thread_id        -> run      (project and session: the saver's options)
//   checkpoint_ns    -> kept in the checkpoint's metadata under NS_KEY, and
//                       in the worklist ids of checkpoints and channels of
//                       every namespace but the root one ('')
//   checkpoint       -> checkpoint body (the checkpoint less its values)
//   metadata         -> checkpoint metadata (jsonb)
//   channel values   -> put_values / run_values by (channel, version)
//   pending writes   -> put_writes / pending_writes (WRITES_IDX_MAP's
//                       negative indexes for the special writes)
//
// Every call is one statement of lib/statements.js.

import { BaseCheckpointSaver, TASKS, WRITES_IDX_MAP, maxChannelVersion } from '@langchain/langgraph-checkpoint';
import { Worklist, LimitExceededError, SerializationError, StaleFenceError, fromDriver } from 'worklist';
import { decodeValue, encodeValue } from './codec.js';
import {
  DELETE_THREAD, GET_BY_ID, GET_LATEST, LIST, NS_KEY, PUT, PUT_WITH_VALUES, PUT_WRITES, SEP,
} from './statements.js';
import { ThreadLease } from './lease.js';

const MAX_ID = 256;
const PAGE = 100;

// A thread id, namespace or checkpoint id worklist cannot keep.
export class InvalidConfigError extends TypeError {
  constructor(message) {
    super(`WorklistSaver: ${message}`);
    this.name = 'InvalidConfigError';
  }
}

// A value, checkpoint or metadata larger than the server's
// worklist.max_document_size (54000): `setting` names the limit, `size`
// and `limit` are bytes when the server says.
export class StateTooLargeError extends LimitExceededError {
  constructor(err, what) {
    super(`WorklistSaver: ${what} is larger than worklist.max_document_size allows (${err.message})`,
      { code: err.code, detail: err.detail, hint: err.hint, cause: err });
    this.argument = err.argument;
    this.size = err.size;
    this.limit = err.limit;
    this.setting = 'worklist.max_document_size';
  }
}

// Text PostgreSQL cannot keep as sent: a NUL, or half of a surrogate pair
// (which the driver would turn into U+FFFD, so that two ids become one).
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
function unkept(s) {
  return s.includes('\u0000') || LONE_SURROGATE.test(s);
}
// JSON text that may hold such a character: an escape \u0000 or \ud800 to
// \udfff (after an even number of backslashes, which escape each other).
// JSON.stringify writes both escaped and a whole surrogate pair as it is.
const UNKEPT_JSON = /(?<!\\)(?:\\\\)*\\u(?:0000|d[89a-f])/i;

// Its length in characters, as the server counts them (code points).
function chars(s) {
  let n = 0;
  for (const _ of s) n++; // eslint-disable-line no-unused-vars
  return n;
}

// An identifier (thread id, namespace, project, session, a pending write's
// task id and channel): a non-empty string the server keeps as sent, of at
// most max characters (Infinity: the server judges the length).
function identifier(v, what, max = MAX_ID, empty = false) {
  if (typeof v !== 'string' || (v === '' && !empty) || chars(v) > max || unkept(v)) {
    const most = Number.isFinite(max) ? ` of at most ${max} characters` : '';
    throw new InvalidConfigError(`${what} must be a ${empty ? '' : 'non-empty '}string${most} `
      + `without NUL or an unpaired surrogate, not ${describe(v)}`);
  }
  return v;
}

// JSON text (a checkpoint's body, metadata, a metadata filter) jsonb can hold.
function jsonText(text, what) {
  if (UNKEPT_JSON.test(text) && UNKEPT_JSON.test(JSON.stringify(JSON.parse(text)))) {
    throw new InvalidConfigError(`${what} holds a NUL or an unpaired surrogate, which jsonb cannot keep`);
  }
  return text;
}

function describe(v) {
  return typeof v === 'string' ? JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v) : String(v);
}

// The worklist run of a thread id.
function threadRun(threadId) {
  if (typeof threadId === 'number' && Number.isFinite(threadId)) threadId = String(threadId);
  return identifier(threadId, 'thread_id (it names a worklist run)');
}

function namespace(ns) {
  if (ns === undefined || ns === null) return '';
  if (typeof ns === 'string' && ns.includes(SEP)) {
    throw new InvalidConfigError(`checkpoint_ns must not contain U+001F, not ${describe(ns)}`);
  }
  return identifier(ns, 'checkpoint_ns', MAX_ID - 2, true);
}

// A name (checkpoint id, channel) within a namespace, as worklist keeps it.
// U+001F separates the two, so a name holds none: a checkpoint id or
// channel of the root namespace could otherwise be taken for one of
// another namespace.
function qualify(ns, name, what) {
  if (typeof name !== 'string' || name === '' || name.includes(SEP) || unkept(name)) {
    throw new InvalidConfigError(`${what} must be a non-empty string without U+001F, NUL or an unpaired `
      + `surrogate, not ${describe(name)}`);
  }
  const key = ns === '' ? name : `${ns}${SEP}${name}`;
  if (chars(key) > MAX_ID) {
    throw new InvalidConfigError(`${what} ${describe(name)} in namespace ${describe(ns)} makes an identifier `
      + `of ${chars(key)} characters; worklist keeps at most ${MAX_ID}`);
  }
  return key;
}

function unqualify(ns, key) {
  return ns === '' ? key : key.slice(ns.length + 1);
}

export class WorklistSaver extends BaseCheckpointSaver {
  // new WorklistSaver({ project, session = 'langgraph', worklist })
  // new WorklistSaver({ project, session, tenant, ...pg connection config })
  constructor({ project, session = 'langgraph', worklist, serde, tenant, ...config } = {}) {
    super(serde);
    identifier(project, '`project`');
    identifier(session, '`session`');
    this.project = project;
    this.session = session;
    this.ownWorklist = !worklist;
    this.worklist = worklist || new Worklist({ tenant, ...config });
    this.leases = new Map(); // thread id -> ThreadLease held by this saver
  }

  // A channel's next version: one more than the greatest, plus a random
  // fraction.  Versions stay numbers and increase, as LangGraph compares
  // them, and two branches of a thread -- a fork from an older checkpoint
  // (updateState on a past config) and the run that went on from it --
  // never give one channel the same version: values are kept by (channel,
  // version), and the first value kept for a pair is the one read.
  getNextVersion(current) {
    if (typeof current === 'string') return super.getNextVersion(current);
    return Math.floor(typeof current === 'number' ? current : 0) + 1 + Math.random();
  }

  async end() {
    for (const lease of this.leases.values()) await lease.release().catch(() => {});
    if (this.ownWorklist) await this.worklist.end();
  }

  // One statement, its tenant set for its own transaction; a serialization
  // failure or deadlock (the statement was rolled back) is retried.
  async query(name, text, values) {
    const wl = this.worklist;
    const query = { text, values: [wl.tenant, ...values] };
    if (wl.prepare) query.name = `worklist langgraph ${name}`;
    const target = wl.client || wl.pool;
    for (let attempt = 0; ; attempt++) {
      try {
        return (await target.query(query)).rows;
      } catch (raw) {
        const err = fromDriver(raw);
        if (err instanceof SerializationError && attempt < 3) {
          await new Promise((resolve) => setTimeout(resolve, 10 * 2 ** attempt * (1 + Math.random())));
          continue;
        }
        throw err;
      }
    }
  }

  // A write of a thread: with the fence of this saver's lease on it, if
  // any (one call at a time with the lease's renewals).
  async fenced(run, what, fn) {
    const lease = this.leases.get(run);
    try {
      if (!lease) return await fn(null);
      return await lease.fenced(fn);
    } catch (err) {
      if (err instanceof LimitExceededError) throw new StateTooLargeError(err, what);
      if (lease && err instanceof StaleFenceError) lease.lost(err);
      throw err;
    }
  }

  async rowTuple(row, threadId) {
    const ns = row.ns;
    const body = JSON.parse(row.body);
    const channelValues = {};
    if (row.channels) {
      const vals = JSON.parse(row.vals);
      for (let i = 0; i < row.channels.length; i++) {
        channelValues[unqualify(ns, row.channels[i])] = await decodeValue(this.serde, vals[i]);
      }
    }
    const checkpoint = {
      ...body,
      channel_versions: body.channel_versions ?? {},
      versions_seen: body.versions_seen ?? {},
      channel_values: channelValues,
    };
    if (row.sends && row.sends.length > 0) {
      // a checkpoint of a format before 4: the sends its parent had pending
      const sends = [];
      for (const text of row.sends) sends.push(await decodeValue(this.serde, text));
      checkpoint.channel_values[TASKS] = sends;
      const versions = Object.values(checkpoint.channel_versions);
      checkpoint.channel_versions[TASKS] = versions.length > 0 ? maxChannelVersion(...versions) : this.getNextVersion(undefined);
    }
    const pendingWrites = [];
    if (row.task_ids) {
      const vals = JSON.parse(row.write_vals);
      for (let i = 0; i < row.task_ids.length; i++) {
        pendingWrites.push([row.task_ids[i], row.write_channels[i], await decodeValue(this.serde, vals[i])]);
      }
    }
    const config = (id) => ({ configurable: { thread_id: threadId ?? row.run, checkpoint_ns: ns, checkpoint_id: id } });
    return {
      config: config(body.id ?? unqualify(ns, row.checkpoint_id)),
      checkpoint,
      metadata: await this.serde.loadsTyped('json', row.metadata),
      parentConfig: row.parent_checkpoint_id ? config(unqualify(ns, row.parent_checkpoint_id)) : undefined,
      pendingWrites,
    };
  }

  async getTuple(config) {
    const { thread_id, checkpoint_ns, checkpoint_id } = config.configurable ?? {};
    if (thread_id === undefined || thread_id === null) return undefined;
    const run = threadRun(thread_id);
    const ns = namespace(checkpoint_ns);
    const rows = checkpoint_id
      ? await this.query('get', GET_BY_ID, [this.project, this.session, run, qualify(ns, checkpoint_id, 'checkpoint_id')])
      : await this.query('latest', GET_LATEST, [this.project, this.session, run, ns]);
    if (rows.length === 0 || rows[0].ns !== ns) return undefined;
    return this.rowTuple(rows[0], thread_id);
  }

  async *list(config, options = {}) {
    const { filter, before, limit } = options ?? {};
    const { thread_id, checkpoint_ns } = config?.configurable ?? {};
    const run = thread_id === undefined || thread_id === null ? null : threadRun(thread_id);
    const ns = checkpoint_ns === undefined || checkpoint_ns === null ? null : namespace(checkpoint_ns);
    if (filter !== undefined && filter !== null && (typeof filter !== 'object' || Array.isArray(filter))) {
      throw new InvalidConfigError(`the filter of list() must be an object of metadata, not ${describe(JSON.stringify(filter))}`);
    }
    if (limit !== undefined && limit !== null && !(Number.isInteger(limit) && limit >= 0)) {
      throw new InvalidConfigError(`the limit of list() must be a non-negative integer, not ${describe(limit)}`);
    }
    let metadata = filter && Object.keys(filter).length > 0 ? { ...filter } : null;
    if (ns !== null) metadata = { ...(metadata ?? {}), [NS_KEY]: ns };
    let cursor = null; // [run, checkpoint id] to start after
    if (before !== undefined && before !== null) {
      const b = before.configurable ?? {};
      if (!b.checkpoint_id) throw new InvalidConfigError('the `before` of list() must name a checkpoint_id');
      const bRun = b.thread_id === undefined || b.thread_id === null ? run : threadRun(b.thread_id);
      if (bRun === null) throw new InvalidConfigError('the `before` of list() must name its thread_id when the listing names none');
      cursor = [bRun, qualify(namespace(b.checkpoint_ns), b.checkpoint_id, 'checkpoint_id')];
    }
    let left = limit ?? Infinity;
    const filterText = metadata === null ? null : jsonText(JSON.stringify(metadata), 'the filter of list()');
    while (left > 0) {
      const lim = Math.min(left, PAGE);
      const rows = await this.query('list', LIST,
        [this.project, this.session, run, filterText, cursor && cursor[0], cursor && cursor[1], lim]);
      for (const row of rows) yield await this.rowTuple(row);
      left -= rows.length;
      if (rows.length < lim) break;
      const last = rows[rows.length - 1];
      cursor = [last.run, last.checkpoint_id];
    }
  }

  async put(config, checkpoint, metadata, newVersions) {
    if (config.configurable === undefined) throw new InvalidConfigError('put() needs config.configurable');
    const { thread_id, checkpoint_ns, checkpoint_id: parentId } = config.configurable;
    if (thread_id === undefined || thread_id === null) throw new InvalidConfigError('put() needs configurable.thread_id');
    const run = threadRun(thread_id);
    const ns = namespace(checkpoint_ns);
    const id = qualify(ns, checkpoint.id, 'checkpoint id');
    const parent = parentId ? qualify(ns, parentId, 'parent checkpoint_id') : null;
    const { channel_values: values = {}, ...body } = checkpoint;
    const channels = [];
    const versions = [];
    const vals = [];
    for (const [channel, version] of Object.entries(newVersions ?? {})) {
      // a channel emptied at this version keeps no value (as none is read)
      if (!Object.prototype.hasOwnProperty.call(values, channel)) continue;
      channels.push(qualify(ns, channel, 'channel'));
      versions.push(String(version));
      vals.push(await encodeValue(this.serde, values[channel]));
    }
    const [, metaBytes] = await this.serde.dumpsTyped(metadata ?? {});
    const meta = jsonText(new TextDecoder().decode(metaBytes), 'the checkpoint\'s metadata');
    const bodyText = jsonText(JSON.stringify(body), 'the checkpoint');
    await this.fenced(run, `the checkpoint of thread ${describe(run)}`, (fence) => {
      const args = [this.project, this.session, run, id, bodyText, meta, ns, parent, fence];
      return channels.length === 0
        ? this.query('put', PUT, args)
        : this.query('put values', PUT_WITH_VALUES, [...args, channels, versions, `[${vals.join(',')}]`]);
    });
    return { configurable: { thread_id, checkpoint_ns: ns, checkpoint_id: checkpoint.id } };
  }

  async putWrites(config, writes, taskId, taskPath = '') {
    const { thread_id, checkpoint_ns, checkpoint_id } = config.configurable ?? {};
    if (thread_id === undefined || thread_id === null) throw new InvalidConfigError('putWrites() needs configurable.thread_id');
    if (!checkpoint_id) throw new InvalidConfigError('putWrites() needs configurable.checkpoint_id');
    const run = threadRun(thread_id);
    const id = qualify(namespace(checkpoint_ns), checkpoint_id, 'checkpoint_id');
    if (writes.length === 0) return;
    const idx = [];
    const channels = [];
    const vals = [];
    for (let i = 0; i < writes.length; i++) {
      const [channel, value] = writes[i];
      idx.push(WRITES_IDX_MAP[channel] ?? i);
      channels.push(identifier(channel, 'the channel of a pending write', Infinity));
      vals.push(await encodeValue(this.serde, value));
    }
    await this.fenced(run, `a pending write of thread ${describe(run)}`, (fence) => this.query('put writes', PUT_WRITES,
      [this.project, this.session, run, id, identifier(String(taskId), 'the task id of a pending write', Infinity), idx,
        channels, `[${vals.join(',')}]`, identifier(taskPath ?? '', 'task_path', Infinity, true), fence]));
  }

  // Removes the thread's checkpoints, values and pending writes (delete_run);
  // the run's fence moves on, so a late write of a former holder is refused.
  async deleteThread(threadId) {
    const run = threadRun(threadId);
    await this.fenced(run, `thread ${describe(run)}`, (fence) => this.query('delete', DELETE_THREAD,
      [this.project, this.session, run, fence]));
  }

  // Lease mode: takes the thread's run with claim_run and renews it; until
  // released, every write of that thread carries its fence.  Null when
  // somebody else holds an unexpired lease.  `claimed` (a row of
  // claim_next_run, whose claim was sent at `claimedAt`) adopts a lease
  // taken already instead.
  async lease(threadId, { holder, ttlMs = 30000, renewFraction = 1 / 3, claimed = null, claimedAt = Date.now() } = {}) {
    const run = threadRun(threadId);
    if (this.leases.has(run)) throw new InvalidConfigError(`thread ${describe(run)} is already leased by this saver`);
    const lease = new ThreadLease(this, run, { holder, ttlMs, renewFraction });
    if (claimed) lease.adopt(claimed, claimedAt);
    else if (!(await lease.claim())) return null;
    this.leases.set(run, lease);
    lease.onEnd = () => {
      if (this.leases.get(run) === lease) this.leases.delete(run);
    };
    return lease;
  }
}
