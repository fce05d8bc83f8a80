// The database the tests run in: made afresh on the server of PGHOST,
// PGPORT and PGUSER (a superuser), with the extension, a tenant bound to
// a service login, a member and a group, and a login bound to nothing.
// Each test file (node --test runs them side by side) has its own
// database and roles, named after the file.
import path from 'node:path';
import pg from 'pg';

const tag = path.basename(process.argv[1]).split('.')[0].replace(/[^a-z0-9]/g, '_');
export const DB = `worklist_clients_node_${tag}`;
export const TENANT = 'ct';
export const ROLES = Object.fromEntries(['service', 'member', 'group', 'stranger']
  .map((r) => [r, `wl_node_${tag}_${r}`]));

async function admin(database, statements) {
  const c = new pg.Client({ database });
  await c.connect();
  try {
    for (const s of statements) await c.query(s);
  } finally {
    await c.end();
  }
}

export async function setUp() {
  const r = ROLES;
  await admin('postgres', [
    'SET client_min_messages = warning',
    `DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`,
    ...Object.values(r).map((role) => `DROP ROLE IF EXISTS ${role}`),
    `CREATE ROLE ${r.group}`,
    `CREATE ROLE ${r.service} LOGIN`,
    `CREATE ROLE ${r.member} LOGIN IN ROLE ${r.group}`,
    `CREATE ROLE ${r.stranger} LOGIN`,
    `CREATE DATABASE ${DB}`,
  ]);
  await admin(DB, [
    'CREATE EXTENSION worklist',
    `SELECT worklist.grant_tenant('${TENANT}', '${r.service}', 'service')`,
    `SELECT worklist.grant_tenant('${TENANT}', '${r.group}', 'member')`,
    `GRANT EXECUTE ON FUNCTION worklist.take_over(text, text, text, text[]) TO ${r.service}`,
    `GRANT EXECUTE ON FUNCTION worklist.set_state(text, worklist.task_state) TO ${r.service}`,
  ]);
}

export async function tearDown() {
  await admin('postgres', [
    `DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`,
    ...Object.values(ROLES).map((role) => `DROP ROLE IF EXISTS ${role}`),
  ]);
}

// SQL as the superuser, in the test tenant.
export async function sql(text, values = []) {
  const c = new pg.Client({ database: DB });
  await c.connect();
  try {
    await c.query(`SELECT set_config('worklist.tenant', '${TENANT}', false)`);
    return (await c.query(text, values)).rows;
  } finally {
    await c.end();
  }
}
