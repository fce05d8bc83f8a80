// What the saver keeps apart and what it refuses before anything is sent.
//
// - A fork: updateState on a past checkpoint, then invoke from the fork.
//   Values are kept by (channel, version), the first value of a pair being
//   the one read, so the fork's versions must differ from those of the run
//   that went on from the same checkpoint (MemorySaver is the reference).
// - Ids the server could not keep as sent (a NUL, half a surrogate pair,
//   which the driver turns into U+FFFD so that two ids became one) and
//   names holding U+001F (the separator of a namespace and a name), in a
//   thread id, checkpoint id, channel or metadata: InvalidConfigError.
// - Lengths count characters, as the server does, not UTF-16 units.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { Annotation, END, MemorySaver, START, StateGraph } from '@langchain/langgraph';
import { emptyCheckpoint } from '@langchain/langgraph-checkpoint';
import { InvalidConfigError, WorklistSaver } from '../index.js';

const TENANT = process.env.WL_LANGGRAPH_TENANT || 'default';

function counter(checkpointer) {
  const State = Annotation.Root({ x: Annotation() });
  return new StateGraph(State)
    .addNode('inc', (s) => ({ x: s.x + 1 }))
    .addEdge(START, 'inc').addEdge('inc', END)
    .compile({ checkpointer });
}

// invoke, fork from the first checkpoint with x = 100, invoke the fork
async function forked(checkpointer, thread) {
  const graph = counter(checkpointer);
  const config = { configurable: { thread_id: thread } };
  const first = (await graph.invoke({ x: 10 }, config)).x;
  const states = [];
  for await (const s of graph.getStateHistory(config)) states.push(s);
  const fork = await graph.updateState(states.at(-1).config, { x: 100 });
  const after = (await graph.invoke(null, fork)).x;
  const latest = (await graph.getState(config)).values.x;
  return { first, after, latest };
}

function checkpoint(id) {
  return { ...emptyCheckpoint(), id };
}

describe('inputs', () => {
  let pool;
  let saver;

  beforeAll(() => {
    pool = new pg.Pool({ max: 2 });
  });
  beforeEach(() => {
    saver = new WorklistSaver({ tenant: TENANT, pool, project: `inputs-${randomUUID().slice(0, 8)}` });
  });
  afterEach(async () => {
    await saver.end();
  });
  afterAll(async () => {
    await pool.end();
  });

  it('a fork from a past checkpoint reads its own values, as with MemorySaver', async () => {
    const memory = await forked(new MemorySaver(), 'fork');
    expect(memory).toEqual({ first: 11, after: 101, latest: 101 });
    expect(await forked(saver, 'fork')).toEqual(memory);
    await saver.deleteThread('fork');
  });

  it('versions are numbers that increase, whatever the current one', () => {
    for (const current of [undefined, 1, 7, 7.25, 123456.999]) {
      const next = saver.getNextVersion(current);
      expect(typeof next).toBe('number');
      expect(next).toBeGreaterThan(current ?? 0);
      expect(Math.floor(next)).toBe(Math.floor(current ?? 0) + 1);
    }
    expect(saver.getNextVersion(3)).not.toBe(saver.getNextVersion(3));
  });

  it('refuses ids the server would not keep as sent', async () => {
    const put = (thread, id = 'c1', ns = '') => saver.put({ configurable: { thread_id: thread, checkpoint_ns: ns } },
      checkpoint(id), {}, {});
    for (const thread of ['user-\ud800', 'user-\udfff', 'a\u0000b']) {
      await expect(put(thread)).rejects.toBeInstanceOf(InvalidConfigError);
      await expect(saver.getTuple({ configurable: { thread_id: thread } })).rejects.toBeInstanceOf(InvalidConfigError);
      await expect(saver.deleteThread(thread)).rejects.toBeInstanceOf(InvalidConfigError);
    }
    for (const id of ['c\u0000', 'c\ud800', 'sub\u001fc1']) {
      await expect(put('t', id)).rejects.toBeInstanceOf(InvalidConfigError);
    }
    await expect(put('t', 'c1', 'n\u0000')).rejects.toBeInstanceOf(InvalidConfigError);
    // a whole surrogate pair is a character like any other
    await put('user-\ud83d\ude00');
    expect((await saver.getTuple({ configurable: { thread_id: 'user-\ud83d\ude00' } })).checkpoint.id).toBe('c1');
    await saver.deleteThread('user-\ud83d\ude00');
  });

  it('keeps a namespace\'s checkpoints and channels apart from the root\'s', async () => {
    const config = (ns) => ({ configurable: { thread_id: 'ns', checkpoint_ns: ns } });
    const withValue = (id, channel, value) => ({
      ...checkpoint(id), channel_values: { [channel]: value }, channel_versions: { [channel]: 1 },
    });
    await saver.put(config('sub'), withValue('c1', 'v', 'subgraph state'), {}, { v: 1 });
    await expect(saver.put(config(''), withValue('sub\u001fc1', 'v', 'root'), {}, { v: 1 }))
      .rejects.toBeInstanceOf(InvalidConfigError);
    await expect(saver.put(config(''), withValue('c2', 'sub\u001fv', 'root'), {}, { 'sub\u001fv': 1 }))
      .rejects.toBeInstanceOf(InvalidConfigError);
    await expect(saver.putWrites({ configurable: { thread_id: 'ns', checkpoint_ns: '', checkpoint_id: 'sub\u001fc1' } },
      [['v', 'root']], 'task')).rejects.toBeInstanceOf(InvalidConfigError);
    const sub = await saver.getTuple({ configurable: { thread_id: 'ns', checkpoint_ns: 'sub', checkpoint_id: 'c1' } });
    expect(sub.checkpoint.channel_values).toEqual({ v: 'subgraph state' });
    expect(sub.pendingWrites).toEqual([]);
    await saver.deleteThread('ns');
  });

  it('refuses metadata, filters and pending writes jsonb cannot keep, and keeps their escaped look-alikes', async () => {
    const config = { configurable: { thread_id: 'meta', checkpoint_ns: '' } };
    await expect(saver.put(config, checkpoint('c1'), { note: 'a\u0000b' }, {})).rejects.toBeInstanceOf(InvalidConfigError);
    await expect(saver.put(config, checkpoint('c1'), { note: 'a\udc00' }, {})).rejects.toBeInstanceOf(InvalidConfigError);
    await expect(saver.list(config, { filter: { note: '\u0000' } }).next()).rejects.toBeInstanceOf(InvalidConfigError);
    await expect(saver.putWrites({ configurable: { ...config.configurable, checkpoint_id: 'c1' } },
      [['ch\u0000', 1]], 'task')).rejects.toBeInstanceOf(InvalidConfigError);
    // the six characters \u0000, and an emoji, are ordinary text
    await saver.put(config, checkpoint('c1'), { note: '\\u0000 \ud83d\ude00' }, {});
    expect((await saver.getTuple(config)).metadata.note).toBe('\\u0000 \ud83d\ude00');
    await saver.deleteThread('meta');
  });

  it('counts an id\'s length in characters, as the server does', async () => {
    const thread = '\ud83d\ude00'.repeat(200); // 200 characters, 400 UTF-16 units
    await saver.put({ configurable: { thread_id: thread, checkpoint_ns: '' } }, checkpoint('c1'), {}, {});
    expect((await saver.getTuple({ configurable: { thread_id: thread } })).checkpoint.id).toBe('c1');
    await saver.deleteThread(thread);
    await expect(saver.getTuple({ configurable: { thread_id: 'x'.repeat(257) } })).rejects.toBeInstanceOf(InvalidConfigError);
  });
});
