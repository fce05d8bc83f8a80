// The statement each verb sends, and the conversions of its arguments and
// results.
//
// A verb is one statement.  Outside a transaction of the caller's it also
// sets the tenant for its own transaction, in the same statement:
//
//   SELECT (x.r).* FROM (SELECT worklist.verb("arg" => $2::type, ...) AS r
//     FROM (SELECT pg_catalog.set_config('worklist.tenant', $1, true) AS tenant OFFSET 0) s
//     WHERE s.tenant IS NOT NULL OFFSET 0) x
//
// The verb is computed from the row that sets the tenant, so it runs
// after the setting, in the same transaction (autocommit: the statement's
// own), and the setting ends with that transaction: nothing of the tenant
// stays on the connection for the next user of a pool or a pooler.  Inside
// a transaction() the tenant is set once at BEGIN, and each verb is the
// bare call.  Only the arguments given are sent (named notation), so every
// other argument keeps the server's default.

// Result shapes: a row type (or null), a set of rows, a scalar, a page.
// `key` is a column that is never NULL in a row the verb returns, so an
// all-NULL row reads as "none".
const TASK = { kind: 'row', key: 'id', convert: null };
const CHECKPOINT = { kind: 'row', key: 'project', convert: null };
const RUN_LEASE = { kind: 'row', key: 'holder', convert: (r) => fence(r, 'fence') };
const CLAIMED_RUN = { kind: 'row', key: 'project', convert: (r) => fence(r, 'fence') };
const TICKET_FOLD = { kind: 'row', key: 'ticket', convert: null };
const TICKET_EVENT = { kind: 'row', key: 'ticket', convert: (r) => count(r, 'seq') };
const TASK_EVENT = { kind: 'row', key: 'task_id', convert: null };
const SWEEP_RESULT = { kind: 'row', key: 'denied', convert: null };
const RETENTION = { kind: 'row', key: null, convert: null };
const DURABLE_RUN = {
  kind: 'row', key: 'project',
  convert: (r) => fence(count(r, 'checkpoint_count'), 'claim_fence'),
};
const SETTLED = { kind: 'row', key: 'id', convert: null };

const one = (shape) => ({ ...shape, many: false, optional: false });
const maybe = (shape) => ({ ...shape, many: false, optional: true });
const many = (shape) => ({ ...shape, many: true });
const scalar = (convert = null) => ({ kind: 'scalar', convert });
const VOID = { kind: 'void' };
const PAGE = { kind: 'page', entry: DURABLE_RUN };

// Every verb: its SQL name, its arguments in the contract's order (name,
// type; `required` of them are positional), and what it returns.
export const VERBS = {
  // tenancy
  grantTenant: ['grant_tenant', [['tenant', 'text'], ['role', 'regrole'], ['kind', 'worklist.binding_kind']], 2, VOID],
  revokeTenant: ['revoke_tenant', [['tenant', 'text'], ['role', 'regrole']], 2, VOID],
  eraseTenant: ['erase_tenant', [], 0, scalar(Number)],
  // tasks
  openTask: ['open_task', [['id', 'text'], ['case_id', 'text'], ['roles', 'text[]'], ['run_id', 'text'],
    ['payload', 'jsonb'], ['priority', 'integer'], ['due_at', 'timestamptz'],
    ['expiry_policy', 'worklist.expiry_policy'], ['excluded', 'text[]'], ['escalation_roles', 'text[]'],
    ['claim_timeout', 'interval']], 3, one(TASK)],
  task: ['task', [['id', 'text']], 1, maybe(TASK)],
  claim: ['claim', [['id', 'text'], ['actor', 'text'], ['roles', 'text[]']], 3, one(TASK)],
  claimNext: ['claim_next', [['actor', 'text'], ['roles', 'text[]'], ['skip', 'text[]']], 2, maybe(TASK)],
  release: ['release', [['id', 'text'], ['actor', 'text']], 2, VOID],
  takeOver: ['take_over', [['id', 'text'], ['from_actor', 'text'], ['actor', 'text'], ['roles', 'text[]']], 4, one(TASK)],
  complete: ['complete', [['id', 'text'], ['actor', 'text'], ['decision', 'jsonb']], 3, scalar()],
  setState: ['set_state', [['id', 'text'], ['state', 'worklist.task_state']], 2, scalar()],
  escalate: ['escalate', [['id', 'text']], 1, one(TASK)],
  withdrawRun: ['withdraw_run', [['run_id', 'text'], ['awaited', 'text[]']], 2, scalar()],
  queue: ['queue', [['roles', 'text[]'], ['lim', 'integer'], ['actor', 'text']], 1, many(TASK)],
  forCase: ['for_case', [['case_id', 'text']], 1, many(TASK)],
  held: ['held', [['actor', 'text'], ['lim', 'integer']], 1, many(TASK)],
  openCount: ['open_count', [], 0, scalar(Number)],
  overdue: ['overdue', [['now', 'timestamptz'], ['lim', 'integer']], 0, many(TASK)],
  sweep: ['sweep', [['now', 'timestamptz'], ['lim', 'integer']], 0, one(SWEEP_RESULT)],
  // tasks, 0.4
  taskHistory: ['task_history', [['id', 'text'], ['after', 'integer'], ['lim', 'integer']], 1, many(TASK_EVENT)],
  note: ['note', [['id', 'text'], ['actor', 'text'], ['body', 'text']], 3, one(TASK_EVENT)],
  handOver: ['hand_over', [['id', 'text'], ['actor', 'text'], ['to_actor', 'text'], ['to_roles', 'text[]']], 4, one(TASK)],
  updateTask: ['update_task', [['id', 'text'], ['priority', 'integer'], ['due_at', 'timestamptz']], 1, one(TASK)],
  claims: ['claims', [['lim', 'integer']], 0, many(TASK)],
  claimMany: ['claim_many', [['actor', 'text'], ['roles', 'text[]'], ['n', 'integer'], ['skip', 'text[]']], 3, many(TASK)],
  completeMany: ['complete_many', [['actor', 'text'], ['ids', 'text[]'], ['decisions', 'jsonb[]']], 3, many(SETTLED)],
  // tickets
  openTicket: ['open_ticket', [['id', 'text'], ['requester', 'text'], ['title', 'text'], ['body', 'jsonb'],
    ['authorities', 'text[]'], ['open_deadline', 'timestamptz'], ['confirm_window', 'interval'],
    ['ladder', 'interval[]']], 3, one(TICKET_FOLD)],
  report: ['report', [['ticket', 'text'], ['actor', 'text'], ['value', 'worklist.participation'],
    ['not_before', 'timestamptz'], ['reason', 'text'], ['at', 'timestamptz']], 3, one(TICKET_FOLD)],
  closeTicket: ['close_ticket', [['ticket', 'text'], ['actor', 'text'], ['outcome', 'worklist.outcome'],
    ['reason', 'text'], ['at', 'timestamptz']], 3, one(TICKET_FOLD)],
  ticketState: ['ticket_state', [['ticket', 'text'], ['now', 'timestamptz']], 1, one(TICKET_FOLD)],
  ticketHistory: ['ticket_history', [['ticket', 'text']], 1, many(TICKET_EVENT)],
  overdueTickets: ['overdue_tickets', [['now', 'timestamptz'], ['lim', 'integer']], 0, many(TICKET_FOLD)],
  // runs
  writeCheckpoint: ['write_checkpoint', [['project', 'text'], ['session', 'text'], ['run', 'text'],
    ['checkpoint_id', 'text'], ['body', 'jsonb'], ['fence', 'bigint'], ['parent_run', 'text'],
    ['created_at', 'timestamptz'], ['run_created_at', 'timestamptz'], ['park_request', 'text'],
    ['parked_at', 'timestamptz'], ['park_deadline', 'timestamptz'], ['park_resolved_at', 'timestamptz'],
    ['metadata', 'jsonb'], ['parent_checkpoint_id', 'text']], 5, VOID],
  readCheckpoint: ['read_checkpoint', [['project', 'text'], ['session', 'text'], ['run', 'text'],
    ['checkpoint_id', 'text']], 4, maybe(CHECKPOINT)],
  listCheckpoints: ['list_checkpoints', [['project', 'text'], ['session', 'text'], ['run', 'text']], 3,
    many(CHECKPOINT)],
  deleteCheckpoint: ['delete_checkpoint', [['project', 'text'], ['session', 'text'], ['run', 'text'],
    ['checkpoint_id', 'text']], 4, VOID],
  pruneCheckpoints: ['prune_checkpoints', [['project', 'text'], ['session', 'text'], ['run', 'text'],
    ['keep', 'integer']], 4, scalar()],
  claimRun: ['claim_run', [['project', 'text'], ['session', 'text'], ['run', 'text'], ['holder', 'text'],
    ['ttl', 'interval'], ['now', 'timestamptz']], 5, maybe(RUN_LEASE)],
  releaseRun: ['release_run', [['project', 'text'], ['session', 'text'], ['run', 'text'], ['fence', 'bigint'],
    ['now', 'timestamptz']], 4, VOID],
  listDurableRuns: ['list_durable_runs', [['project', 'text'], ['session', 'text'], ['order_by', 'text'],
    ['park', 'worklist.park_state[]'], ['claimed', 'boolean'], ['lim', 'integer'], ['cursor', 'text'],
    ['now', 'timestamptz'], ['concluded', 'boolean']], 0, PAGE],
  // runs, 0.4
  parkRun: ['park_run', [['project', 'text'], ['session', 'text'], ['run', 'text'], ['checkpoint_id', 'text'],
    ['tasks', 'text[]'], ['fence', 'bigint'], ['body', 'jsonb'], ['park_request', 'text'],
    ['park_deadline', 'timestamptz'], ['now', 'timestamptz'], ['metadata', 'jsonb'],
    ['parent_checkpoint_id', 'text']], 5, one(CHECKPOINT)],
  claimNextRun: ['claim_next_run', [['project', 'text'], ['holder', 'text'], ['ttl', 'interval'],
    ['session', 'text'], ['now', 'timestamptz']], 3, maybe(CLAIMED_RUN)],
  concludeRun: ['conclude_run', [['project', 'text'], ['session', 'text'], ['run', 'text'], ['fence', 'bigint'],
    ['now', 'timestamptz']], 3, scalar()],
  // sweep, retention, notifications, counters
  setRetention: ['set_retention', [['tasks', 'interval'], ['tickets', 'interval'], ['runs', 'interval']], 0, VOID],
  retention: ['retention', [], 0, one(RETENTION)],
  channel: ['channel', [], 0, scalar()],
  rotateChannel: ['rotate_channel', [], 0, scalar()],
  stats: ['stats', [], 0, scalar()],
  startSweeper: ['start_sweeper', [], 0, scalar()],
};

function fence(row, name) {
  if (row[name] !== null && row[name] !== undefined) row[name] = BigInt(row[name]);
  return row;
}

function count(row, name) {
  if (row[name] !== null && row[name] !== undefined) row[name] = Number(row[name]);
  return row;
}

// Arguments, from JavaScript to the text PostgreSQL reads.
function interval(v) {
  return typeof v === 'number' ? `${v} milliseconds` : v;
}

function encode(type, v) {
  if (v === undefined || v === null) return null;
  switch (type) {
    case 'jsonb':
      return JSON.stringify(v);
    case 'jsonb[]':
      return v.map((x) => JSON.stringify(x));
    case 'bigint':
      return typeof v === 'bigint' ? v.toString() : v;
    case 'interval':
      return interval(v);
    case 'interval[]':
      return v.map(interval);
    default:
      return v;
  }
}

// The statement of one call: its text (cached per set of arguments given)
// and its values.
const cache = new Map();

export function statement(verb, given, tenant) {
  const [name, args, required, returns] = VERBS[verb];
  // the required arguments always (NULL is the server's to refuse), the
  // others when given
  const present = args.filter(([arg], i) => i < required || (given[arg] !== undefined && given[arg] !== null));
  const key = `${verb}|${tenant === null ? 't' : 's'}|${present.map(([a]) => a).join(',')}`;
  let cached = cache.get(key);
  if (cached === undefined) {
    const offset = tenant === null ? 1 : 2;
    const list = present.map(([arg, type], i) => `"${arg}" => $${i + offset}::${type}`).join(', ');
    cached = { text: wrap(`worklist.${name}(${list})`, returns, tenant !== null), name: `worklist ${cache.size + 1}` };
    cache.set(key, cached);
  }
  const values = present.map(([arg, type]) => encode(type, given[arg]));
  return { ...cached, values: tenant === null ? values : [tenant, ...values] };
}

function wrap(call, returns, setTenant) {
  const source = setTenant
    ? `(SELECT ${call} AS r FROM (SELECT pg_catalog.set_config('worklist.tenant', $1, true) AS tenant OFFSET 0) s`
      + ' WHERE s.tenant IS NOT NULL OFFSET 0) x'
    : `(SELECT ${call} AS r OFFSET 0) x`;
  switch (returns.kind) {
    case 'scalar':
    case 'void':
      return `SELECT x.r AS value FROM ${source}`;
    case 'page':
      return `SELECT (x.r).cursor AS "page cursor", e.* FROM ${source}`
        + ' LEFT JOIN LATERAL pg_catalog.unnest((x.r).entries) e ON true';
    default:
      return `SELECT (x.r).* FROM ${source}`;
  }
}

// Results, from the rows pg returns to plain objects.
function entry(shape, row) {
  if (shape.key !== null && (row[shape.key] === null || row[shape.key] === undefined)) return null;
  return shape.convert ? shape.convert(row) : row;
}

export function result(verb, rows) {
  const returns = VERBS[verb][3];
  switch (returns.kind) {
    case 'void':
      return undefined;
    case 'scalar': {
      const v = rows[0].value;
      return returns.convert && v !== null ? returns.convert(v) : v;
    }
    case 'page': {
      const cursor = rows.length ? rows[0]['page cursor'] : null;
      const entries = [];
      for (const row of rows) {
        delete row['page cursor'];
        const e = entry(returns.entry, row);
        if (e !== null) entries.push(e);
      }
      return { entries, cursor };
    }
    default: {
      if (returns.many) return rows.map((row) => entry(returns, row)).filter((r) => r !== null);
      const r = rows.length ? entry(returns, rows[0]) : null;
      if (r === null && !returns.optional && returns.key !== null) {
        throw new Error(`worklist.${VERBS[verb][0]} returned no row`);
      }
      return r;
    }
  }
}

// Values of result columns: bigint as BigInt (then counts made Numbers
// above), interval as PostgreSQL's text; everything else as pg reads it
// (timestamptz as Date, jsonb parsed, arrays as arrays, enums as strings).
export function typeParsers(pgTypes) {
  return {
    getTypeParser(oid, format) {
      if (oid === 20) return (v) => (v === null ? null : BigInt(v));
      if (oid === 1186) return (v) => v;
      return pgTypes.getTypeParser(oid, format);
    },
  };
}
