// The CheckpointerTestInitializer of LangGraph's checkpointer validation
// suite (@langchain/langgraph-checkpoint-validation) for WorklistSaver.
//
// It connects to the server PGHOST, PGPORT, PGUSER and PGDATABASE name (and
// PGPASSWORD, as pg reads it), in which `CREATE EXTENSION worklist` has been
// done, and needs nothing else there.  Each checkpointer the suite creates
// gets a project of its own (a random prefix of this run and a counter), so
// no instance reads another's state and nothing is dropped; destroying one
// deletes its threads through the saver (deleteThread), and the tenant is
// WL_LANGGRAPH_TENANT (default 'default').
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { Worklist } from 'worklist';
import { WorklistSaver } from '../index.js';

const prefix = `validation-${randomUUID().slice(0, 8)}`;
let pool;
let worklist;
let made = 0;

const initializer = {
  checkpointerName: '@worklist/langgraph',
  beforeAllTimeout: 30000,

  async beforeAll() {
    pool = new pg.Pool({ max: 4 });
    worklist = new Worklist({ tenant: process.env.WL_LANGGRAPH_TENANT || 'default', pool });
    const { rows } = await pool.query("SELECT pg_catalog.to_regproc('worklist.put_values') IS NOT NULL AS ok");
    if (!rows[0].ok) throw new Error('the database has no worklist 0.4 (CREATE EXTENSION worklist)');
  },

  async afterAll() {
    await pool?.end();
  },

  createCheckpointer() {
    made += 1;
    return new WorklistSaver({ worklist, project: `${prefix}-${made}` });
  },

  async destroyCheckpointer(saver) {
    // every thread of the saver's project, through the saver
    const threads = new Set();
    for await (const tuple of saver.list({})) threads.add(tuple.config.configurable.thread_id);
    for (const thread of threads) await saver.deleteThread(thread);
    await saver.end();
  },
};

export default initializer;
