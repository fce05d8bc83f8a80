// Runs, 0.4: the state of an agent framework kept by the run verbs --
// channel values by (channel, version), pending writes per checkpoint,
// the newest checkpoint of a run, a newest-first listing, and the delete
// of a whole run.  Each is a method of Worklist, like every other verb:
// the required arguments positionally, then an object of the optional
// ones under the verb's own argument names.

import { Worklist } from './client.js';
import { VERBS } from './sql.js';

const CHECKPOINT = { kind: 'row', key: 'project', convert: null };
const RUN_WRITE = { kind: 'row', key: 'task_id', convert: null, many: true };
const RUN_VALUE = { kind: 'row', key: 'channel', convert: null, many: true };
const COUNT = { kind: 'scalar', convert: Number };

const RUN = [['project', 'text'], ['session', 'text'], ['run', 'text']];

// method: [SQL name, arguments in order, how many are positional, result]
const STATE_VERBS = {
  latestCheckpoint: ['latest_checkpoint', RUN, 3, { ...CHECKPOINT, many: false, optional: true }],
  newestCheckpoints: ['newest_checkpoints', [['project', 'text'], ['session', 'text'], ['run', 'text'],
    ['metadata', 'jsonb'], ['before_session', 'text'], ['before_run', 'text'],
    ['before_checkpoint_id', 'text'], ['lim', 'integer']], 1, { ...CHECKPOINT, many: true }],
  putWrites: ['put_writes', [...RUN, ['checkpoint_id', 'text'], ['task_id', 'text'], ['idx', 'integer[]'],
    ['channels', 'text[]'], ['vals', 'jsonb[]'], ['task_path', 'text'], ['fence', 'bigint']], 8, COUNT],
  pendingWrites: ['pending_writes', [...RUN, ['checkpoint_id', 'text']], 4, RUN_WRITE],
  putValues: ['put_values', [...RUN, ['channels', 'text[]'], ['versions', 'text[]'], ['vals', 'jsonb[]'],
    ['fence', 'bigint']], 6, COUNT],
  runValues: ['run_values', [...RUN, ['channels', 'text[]'], ['versions', 'text[]']], 5, RUN_VALUE],
  deleteRun: ['delete_run', [...RUN, ['fence', 'bigint'], ['now', 'timestamptz']], 3, COUNT],
};

// The call of one method: its positional arguments and its options, by
// name, checked against the verb's arguments.
function given(method, [, args, required], positional) {
  if (positional.length > required + 1) throw new TypeError(`${method}: too many arguments`);
  const named = Object.fromEntries(args.slice(0, required).map(([arg], i) => [arg, positional[i]]));
  const options = positional[required];
  if (options === undefined || options === null) return named;
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`${method}: the argument after the ${required} required ones must be an object of options`);
  }
  const optional = new Set(args.slice(required).map(([arg]) => arg));
  for (const [name, value] of Object.entries(options)) {
    if (!optional.has(name)) throw new TypeError(`${method}: unknown option "${name}"`);
    named[name] = value;
  }
  return named;
}

for (const [method, verb] of Object.entries(STATE_VERBS)) {
  VERBS[method] = verb;
  Object.defineProperty(Worklist.prototype, method, {
    value(...positional) {
      try {
        return this.call(method, given(method, verb, positional));
      } catch (err) {
        return Promise.reject(err);
      }
    },
    writable: true,
    configurable: true,
  });
}

export { STATE_VERBS };
