// Two workers resume one thread of a real StateGraph.  Worker A (a process
// of its own) resumes it and is paused (SIGSTOP) in the middle of a node
// for longer than its lease; worker B resumes the same thread meanwhile
// and finishes it; then A goes on.  With PostgresSaver both write
// children of the checkpoint they resumed from: the history forks.  With
// WorklistSaver, B's claim superseded A's fence: A's next write is refused
// (StaleFenceError, WL007) and the history stays one chain.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Command } from '@langchain/langgraph';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { WorklistSaver } from '../index.js';
import { forkGraph } from './fixtures/fork-graph.mjs';

const WORKER = fileURLToPath(new URL('./fixtures/resume-worker.mjs', import.meta.url));
const TENANT = process.env.WL_LANGGRAPH_TENANT || 'default';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Worker A: resumes the thread, is stopped once it has its answer, and is
// let go on after `during()` (worker B) is done.  Its outcome (JSON).
async function pausedWorker(kind, thread, scope, during) {
  const child = spawn(process.execPath, [WORKER, kind, thread, scope], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => { err += d; });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  await new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('paused\n')) resolve();
    });
    child.on('exit', () => reject(new Error(`worker A ended before its pause: ${out} ${err}`)));
  });
  child.kill('SIGSTOP');
  try {
    await sleep(1500); // longer than A's lease (1 s)
    await during();
  } finally {
    child.kill('SIGCONT');
  }
  const code = await exited;
  expect(code, err).toBe(0);
  return JSON.parse(out.trim().split('\n').at(-1));
}

async function history(saver, thread) {
  const tuples = [];
  for await (const t of saver.list({ configurable: { thread_id: thread } })) tuples.push(t);
  return tuples.map((t) => ({ id: t.config.configurable.checkpoint_id, parent: t.parentConfig?.configurable?.checkpoint_id }));
}

// parent id -> how many checkpoints name it
function children(chain) {
  const n = new Map();
  for (const c of chain) if (c.parent) n.set(c.parent, (n.get(c.parent) ?? 0) + 1);
  return n;
}

describe('two workers resume one thread, the first paused past its lease', () => {
  let pool;
  beforeAll(() => {
    pool = new pg.Pool({ max: 4 });
  });
  afterAll(async () => {
    await pool?.end();
  });

  it('PostgresSaver: both write, and the history forks', async () => {
    const schema = `lg_fork_${randomUUID().slice(0, 8)}`;
    const saver = new PostgresSaver(pool, undefined, { schema });
    await saver.setup();
    try {
      const graph = forkGraph(saver);
      const thread = 'fork-thread';
      const config = { configurable: { thread_id: thread } };
      await graph.invoke({ log: [] }, config);
      const resumedFrom = (await graph.getState(config)).config.configurable.checkpoint_id;

      const a = await pausedWorker('postgres', thread, schema, async () => {
        const b = await graph.invoke(new Command({ resume: 'B' }), config);
        expect(b.log).toEqual(['ask:B', 'work after ask:B']);
      });
      expect(a).toEqual({ ok: true, log: ['ask:A', 'work after ask:A'] });

      const chain = await history(saver, thread);
      const forks = [...children(chain)].filter(([, n]) => n > 1);
      // the checkpoint both resumed from has two children: one of A's, one of B's
      expect(forks).toEqual([[resumedFrom, 2]]);
      expect(chain.filter((c) => c.parent === resumedFrom)).toHaveLength(2);
    } finally {
      await pool.query(`DROP SCHEMA ${schema} CASCADE`);
    }
  });

  it('WorklistSaver: the stale worker is refused (StaleFenceError) and the history is one chain', async () => {
    const project = `fork-${randomUUID().slice(0, 8)}`;
    const saver = new WorklistSaver({ tenant: TENANT, pool, project });
    try {
      const graph = forkGraph(saver);
      const thread = 'fork-thread';
      const config = { configurable: { thread_id: thread } };
      await graph.invoke({ log: [] }, config);

      const a = await pausedWorker('worklist', thread, project, async () => {
        const lease = await saver.lease(thread, { holder: 'worker-B', ttlMs: 10000 });
        expect(lease).not.toBeNull(); // A's lease ran out while it was stopped
        try {
          const b = await graph.invoke(new Command({ resume: 'B' }), { ...config, signal: lease.signal });
          expect(b.log).toEqual(['ask:B', 'work after ask:B']);
        } finally {
          await lease.release();
        }
      });
      expect(a).toMatchObject({ ok: false, stale: true, name: 'StaleFenceError', code: 'WL007' });

      const chain = await history(saver, thread); // newest first
      expect(chain.length).toBeGreaterThan(2);
      for (let i = 0; i < chain.length - 1; i++) expect(chain[i].parent).toBe(chain[i + 1].id);
      expect(chain.at(-1).parent).toBeUndefined();
      expect([...children(chain).values()].every((n) => n === 1)).toBe(true);
      expect((await graph.getState(config)).values.log).toEqual(['ask:B', 'work after ask:B']);
    } finally {
      await saver.deleteThread('fork-thread');
      await saver.end();
    }
  });
});
