// Every 0.3 verb of Worklist, every error class provoked from the server,
// the conversions of arguments and results, and the tenant set per
// transaction.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import * as worklist from '../index.js';
import { DB, ROLES, TENANT, setUp, sql, tearDown } from './setup.mjs';

const { Worklist } = worklist;
let wl;       // the superuser
let service;  // the service login
const hour = 3600 * 1000;

before(async () => {
  await setUp();
  wl = new Worklist({ tenant: TENANT, database: DB, max: 2 });
  service = new Worklist({ tenant: TENANT, database: DB, user: ROLES.service, max: 2 });
});
after(async () => {
  await wl.end();
  await service.end();
  await tearDown();
});

async function rejects(promise, Class, check = () => {}) {
  await assert.rejects(promise, (err) => {
    assert.ok(err instanceof Class, `${err && err.name}: ${err && err.message} is not a ${Class.name}`);
    assert.ok(err instanceof worklist.WorklistError);
    check(err);
    return true;
  });
}

describe('tasks', () => {
  it('open_task: every argument, converted both ways', async () => {
    const due = new Date(Date.now() + hour);
    const t = await service.openTask('t1', 'case-1', ['reviewer'], {
      run_id: 'run-1', payload: { amount: 120, tags: ['a'] }, priority: 5, due_at: due,
      expiry_policy: 'escalate', excluded: ['mallory'], escalation_roles: ['lead'], claim_timeout: 90000,
    });
    assert.equal(t.id, 't1');
    assert.equal(t.case_id, 'case-1');
    assert.equal(t.run_id, 'run-1');
    assert.equal(t.state, 'open');
    assert.deepEqual(t.roles, ['reviewer']);
    assert.deepEqual(t.excluded, ['mallory']);
    assert.deepEqual(t.escalation_roles, ['lead']);
    assert.equal(t.priority, 5);
    assert.deepEqual(t.payload, { amount: 120, tags: ['a'] });
    assert.ok(t.due_at instanceof Date);
    assert.equal(t.due_at.getTime(), due.getTime());
    assert.equal(t.expiry_policy, 'escalate');
    assert.equal(t.claim_timeout, '00:01:30');
    assert.ok(t.created_at instanceof Date);
    assert.equal(t.holder, null);
    const again = await service.openTask('t1', 'other', ['x'], { claim_timeout: '2 minutes' });
    assert.equal(again.case_id, 'case-1');
  });

  it('task: a task, or null (never a row of NULLs)', async () => {
    assert.equal((await service.task('t1')).id, 't1');
    assert.equal(await service.task('missing'), null);
  });

  it('claim, claim_next, held, release, queue, for_case', async () => {
    await service.openTask('t2', 'case-1', ['reviewer'], { priority: 9 });
    const q = await service.queue(['reviewer'], { lim: 10, actor: 'alice' });
    assert.deepEqual(q.map((t) => t.id), ['t2', 't1']);
    assert.deepEqual((await service.forCase('case-1')).map((t) => t.id), ['t2', 't1']);
    const c = await service.claimNext('alice', ['reviewer']);
    assert.equal(c.id, 't2');
    assert.equal(c.holder, 'alice');
    assert.ok(c.claimed_at instanceof Date);
    const same = await service.claim('t2', 'alice', ['reviewer']);
    assert.equal(same.claimed_at.getTime(), c.claimed_at.getTime());
    assert.deepEqual((await service.held('alice')).map((t) => t.id), ['t2']);
    assert.deepEqual(await service.held('nobody', { lim: 5 }), []);
    await service.release('t2', 'alice');
    assert.equal((await service.task('t2')).state, 'open');
    assert.equal(await service.claimNext('alice', ['nobody-role']), null);
    assert.equal(await service.openCount(), 2);
  });

  it('take_over, complete (true, retried true, false), set_state, escalate', async () => {
    await service.claim('t2', 'alice', ['reviewer']);
    const moved = await service.takeOver('t2', 'alice', 'bob', ['reviewer']);
    assert.equal(moved.holder, 'bob');
    assert.equal(await service.complete('t2', 'bob', 'approve'), true);
    assert.equal(await service.complete('t2', 'bob', 'approve'), true);
    assert.equal(await service.complete('t2', 'bob', 'reject'), false);
    const done = await service.task('t2');
    assert.equal(done.decision, 'approve');
    assert.equal(done.decided_by, 'bob');
    assert.ok(done.settled_at instanceof Date);
    await service.openTask('t3', 'case-3', ['reviewer']);
    const e = await service.escalate('t3');
    assert.equal(e.state, 'escalated');
    assert.equal(await service.setState('t3', 'withdrawn'), true);
    assert.equal(await service.setState('t3', 'expired'), false);
  });

  it('withdraw_run, overdue, sweep', async () => {
    await service.openTask('t4', 'case-4', ['reviewer'], { run_id: 'run-4' });
    await service.openTask('t5', 'case-4', ['reviewer'], { run_id: 'run-4' });
    assert.equal(await service.withdrawRun('run-4', ['t4', 't5', 'nope']), 2);
    await service.openTask('t6', 'case-6', ['reviewer'], { due_at: new Date(Date.now() - 1000) });
    const late = await service.overdue({ now: new Date(), lim: 10 });
    assert.deepEqual(late.map((t) => t.id), ['t6']);
    const s = await service.sweep({ now: new Date(), lim: 10 });
    assert.deepEqual(s, {
      denied: 1, proceeded: 0, escalated: 0, tickets_escalated: 0, tickets_confirmed: 0, claims_released: 0, purged: 0,
    });
    assert.deepEqual((await service.task('t6')).decision, { policy: 'deny' });
  });
});

describe('tickets', () => {
  it('open_ticket, report, close_ticket, ticket_state, ticket_history, overdue_tickets', async () => {
    const f = await service.openTicket('k1', 'dana', 'Login fails', {
      body: { os: 'linux' }, authorities: ['lead'], open_deadline: new Date(Date.now() + hour),
      confirm_window: '1 hour', ladder: ['1 hour', 4 * hour],
    });
    assert.equal(f.ticket, 'k1');
    assert.equal(f.state, 'open');
    assert.equal(f.escalation_rung, 0);
    const r = await service.report('k1', 'agent-a', 'working', { not_before: new Date(Date.now() + hour), reason: 'on it' });
    assert.equal(r.state, 'working');
    assert.deepEqual(r.live_actors, ['agent-a']);
    assert.ok(r.deadline instanceof Date);
    const demoted = await service.closeTicket('k1', 'agent-a', 'done');
    assert.deepEqual(demoted.unauthorized_close, ['agent-a']);
    const closed = await service.closeTicket('k1', 'dana', 'done', { reason: 'fixed' });
    assert.equal(closed.state, 'done');
    assert.deepEqual(closed.confirmation, { kind: 'explicit', confirmed_by: 'dana' });
    assert.equal((await service.ticketState('k1', { now: new Date() })).closed_by, 'dana');
    const h = await service.ticketHistory('k1');
    assert.deepEqual(h.map((e) => [e.seq, e.kind, e.value]),
      [[1, 'participation', 'working'], [2, 'outcome', 'done'], [3, 'outcome', 'done']]);
    assert.equal(typeof h[0].seq, 'number');
    assert.ok(h[0].at instanceof Date);
    await service.openTicket('k2', 'dana', 'Nobody said when');
    assert.deepEqual((await service.overdueTickets({ lim: 10 })).map((t) => t.ticket), ['k2']);
  });
});

describe('runs', () => {
  it('claim_run, write_checkpoint, read_checkpoint, release_run: fences are BigInt', async () => {
    const lease = await service.claimRun('p', 's', 'r1', 'w1', 60000);
    assert.equal(typeof lease.fence, 'bigint');
    assert.equal(lease.holder, 'w1');
    assert.ok(lease.expires_at instanceof Date);
    assert.equal(await service.claimRun('p', 's', 'r1', 'w2', '1 minute'), null);
    await service.writeCheckpoint('p', 's', 'r1', 'c1', { i: 1 }, { fence: lease.fence, run_created_at: new Date(0) });
    // a checkpoint whose park fields are all NULL is a checkpoint
    const c = await service.readCheckpoint('p', 's', 'r1', 'c1');
    assert.equal(c.checkpoint_id, 'c1');
    assert.deepEqual(c.body, { i: 1 });
    assert.equal(c.park_request, null);
    assert.equal(c.run_created_at.getTime(), 0);
    assert.equal(await service.readCheckpoint('p', 's', 'r1', 'missing'), null);
    await service.releaseRun('p', 's', 'r1', lease.fence);
    const next = await service.claimRun('p', 's', 'r1', 'w2', 60000);
    assert.ok(next.fence > lease.fence);
  });

  it('list_checkpoints, delete_checkpoint, prune_checkpoints', async () => {
    for (const id of ['c2', 'c3', 'c4']) await service.writeCheckpoint('p', 's', 'r1', id, { id });
    assert.deepEqual((await service.listCheckpoints('p', 's', 'r1')).map((c) => c.checkpoint_id), ['c1', 'c2', 'c3', 'c4']);
    await service.deleteCheckpoint('p', 's', 'r1', 'c2');
    await service.deleteCheckpoint('p', 's', 'r1', 'c2');
    assert.equal(await service.pruneCheckpoints('p', 's', 'r1', 1), 2);
    assert.deepEqual((await service.listCheckpoints('p', 's', 'r1')).map((c) => c.checkpoint_id), ['c4']);
  });

  it('list_durable_runs: an array of composites parsed, park filters cast, pages', async () => {
    const parkedAt = new Date();
    await service.writeCheckpoint('p', 's', 'r2', 'c1', {}, {
      park_request: 'approve', parked_at: parkedAt, park_deadline: new Date(Date.now() + hour),
    });
    await service.writeCheckpoint('p', 's', 'r3', 'c1', {});
    const page = await service.listDurableRuns({ project: 'p', lim: 2 });
    assert.deepEqual(page.entries.map((e) => e.run), ['r1', 'r2']);
    assert.equal(typeof page.cursor, 'string');
    const r1 = page.entries[0];
    assert.equal(typeof r1.claim_fence, 'bigint');
    assert.equal(r1.checkpoint_count, 1);
    assert.equal(r1.claim_expired, false);
    assert.equal(r1.park_state, null);
    assert.equal(page.entries[1].park_state, 'outstanding');
    assert.equal(page.entries[1].parked_at.getTime(), parkedAt.getTime());
    const rest = await service.listDurableRuns({ project: 'p', lim: 2, cursor: page.cursor });
    assert.deepEqual(rest.entries.map((e) => e.run), ['r3']);
    assert.equal(rest.cursor, null);
    const parked = await service.listDurableRuns({ project: 'p', park: ['outstanding', 'expired'] });
    assert.deepEqual(parked.entries.map((e) => e.run), ['r2']);
    assert.deepEqual(await service.listDurableRuns({ project: 'none' }), { entries: [], cursor: null });
    const byAge = await service.listDurableRuns({ project: 'p', session: 's', order_by: 'created_at', claimed: false, now: new Date() });
    assert.deepEqual(byAge.entries.map((e) => e.run), ['r2', 'r3']);
  });
});

describe('tenancy, retention, notifications, counters', () => {
  it('grant_tenant, revoke_tenant, erase_tenant', async () => {
    const other = new Worklist({ tenant: 'ct-erase', database: DB });
    try {
      await other.grantTenant('ct-erase', ROLES.stranger, { kind: 'service' });
      const stranger = new Worklist({ tenant: 'ct-erase', database: DB, user: ROLES.stranger });
      try {
        await stranger.openTask('e1', 'c', ['r']);
        await other.revokeTenant('ct-erase', ROLES.stranger);
        await rejects(stranger.task('e1'), worklist.InsufficientPrivilegeError);
      } finally {
        await stranger.end();
      }
      assert.equal(await other.eraseTenant(), 2); // the task and its history event
      assert.equal(await other.task('e1'), null);
    } finally {
      await other.end();
    }
  });

  it('set_retention, retention: intervals as PostgreSQL writes them', async () => {
    await service.setRetention({ tasks: '90 days', runs: 30 * 24 * hour });
    assert.deepEqual(await service.retention(), { tasks: '90 days', tickets: null, runs: '720:00:00' });
    await service.setRetention();
    assert.deepEqual(await service.retention(), { tasks: null, tickets: null, runs: null });
  });

  it('channel, rotate_channel, stats, start_sweeper', async () => {
    const ch = await wl.channel();
    assert.match(ch, /^worklist_[0-9a-f]{32}$/);
    assert.equal(await service.channel(), ch);
    const rotated = await wl.rotateChannel();
    assert.notEqual(rotated, ch);
    const stats = await service.stats();
    assert.equal(stats.tenant, TENANT);
    assert.equal(typeof stats.tasks.open, 'number');
    assert.equal(typeof (await wl.startSweeper()), 'number');
  });

  it('the tenant is set per transaction: nothing stays on the connection', async () => {
    const pool = new pg.Pool({ database: DB, max: 1 });
    try {
      const a = new Worklist({ tenant: TENANT, pool });
      const b = new Worklist({ tenant: 'ct-other', pool });
      await b.openTask('t1', 'other-case', ['reviewer']);
      assert.equal((await a.task('t1')).case_id, 'case-1');
      assert.equal((await b.task('t1')).case_id, 'other-case');
      const { rows } = await pool.query("SELECT current_setting('worklist.tenant') AS t");
      assert.equal(rows[0].t, 'default');
      assert.equal(await b.eraseTenant(), 2); // the task and its history event
    } finally {
      await pool.end();
    }
  });

  it('transaction(): one tenant set for every verb, rolled back on an error', async () => {
    await assert.rejects(service.transaction(async (tx) => {
      await tx.openTask('tx1', 'c', ['reviewer']);
      assert.equal((await tx.task('tx1')).id, 'tx1');
      throw new Error('no');
    }), /no/);
    assert.equal(await service.task('tx1'), null);
    const n = await service.transaction(async (tx) => {
      await tx.openTask('tx1', 'c', ['reviewer']);
      return tx.openCount();
    });
    assert.equal(typeof n, 'number');
    assert.equal((await service.task('tx1')).state, 'open');
  });

  it('arguments are checked before anything is sent', async () => {
    await assert.rejects(service.claim('t1', 'alice', ['reviewer'], { what: 1 }), TypeError);
    await assert.rejects(service.task('t1', 'extra'), TypeError);
    assert.throws(() => new Worklist({}), TypeError);
  });
});

describe('errors by SQLSTATE, with the DETAIL\'s facts', () => {
  it('WL001 not_found', async () => {
    await rejects(service.claim('ghost', 'alice', ['reviewer']), worklist.NotFoundError, (e) => {
      assert.equal(e.code, 'WL001');
      assert.equal(e.kind, 'task');
      assert.equal(e.id, 'ghost');
      assert.equal(e.transient, false);
    });
    await rejects(service.ticketState('ghost'), worklist.NotFoundError, (e) => assert.equal(e.kind, 'ticket'));
  });

  it('WL002 excluded, WL003 wrong_role', async () => {
    await rejects(service.claim('t1', 'mallory', ['reviewer']), worklist.ExcludedError, (e) => {
      assert.equal(e.actor, 'mallory');
      assert.equal(e.id, 't1');
    });
    await rejects(service.claim('t1', 'alice', ['cook']), worklist.WrongRoleError, (e) => {
      assert.equal(e.actor, 'alice');
      assert.equal(e.id, 't1');
    });
  });

  it('WL004 not_pending names the state', async () => {
    await rejects(service.claim('t2', 'alice', ['reviewer']), worklist.NotPendingError, (e) => {
      assert.equal(e.id, 't2');
      assert.equal(e.state, 'completed');
    });
  });

  it('WL005 already_claimed names the holder', async () => {
    await service.openTask('h"1', 'c', ['reviewer']);
    await service.claim('h"1', 'a "quoted" holder', ['reviewer']);
    await rejects(service.claim('h"1', 'alice', ['reviewer']), worklist.AlreadyClaimedError, (e) => {
      assert.equal(e.id, 'h"1');
      assert.equal(e.holder, 'a "quoted" holder');
    });
  });

  it('WL006 not_held names the actor and the holder, or nobody', async () => {
    await rejects(service.complete('h"1', 'alice', {}), worklist.NotHeldError, (e) => {
      assert.equal(e.actor, 'alice');
      assert.equal(e.holder, 'a "quoted" holder');
    });
    await service.openTask('free', 'c', ['reviewer']);
    await rejects(service.release('free', 'alice'), worklist.NotHeldError, (e) => assert.equal(e.holder, null));
  });

  it('WL007 stale_fence: the write\'s fence and the current one, or none', async () => {
    const lease = await service.claimRun('p', 's', 'f1', 'w1', 60000);
    await rejects(service.writeCheckpoint('p', 's', 'f1', 'c', {}, { fence: lease.fence - 1n }),
      worklist.StaleFenceError, (e) => {
        assert.equal(e.run, 'f1');
        assert.equal(e.fence, lease.fence - 1n);
        assert.equal(e.current_fence, lease.fence);
      });
    await rejects(service.writeCheckpoint('p', 's', 'never-claimed', 'c', {}, { fence: 7n }),
      worklist.StaleFenceError, (e) => {
        assert.equal(e.fence, 7n);
        assert.equal(e.current_fence, null);
      });
  });

  it('42501: a tenant out of reach, a member naming somebody else', async () => {
    const stranger = new Worklist({ tenant: TENANT, database: DB, user: ROLES.stranger });
    const member = new Worklist({ tenant: TENANT, database: DB, user: ROLES.member });
    try {
      await rejects(stranger.task('t1'), worklist.InsufficientPrivilegeError, (e) => {
        assert.equal(e.code, '42501');
        assert.equal(e.tenant, TENANT);
      });
      await rejects(member.claim('t1', 'bob', ['reviewer']), worklist.InsufficientPrivilegeError, (e) => {
        assert.equal(e.argument, 'actor');
      });
    } finally {
      await stranger.end();
      await member.end();
    }
  });

  it('22023: the argument named', async () => {
    await rejects(service.openTask('', 'c', ['r']), worklist.InvalidArgumentError, (e) => assert.equal(e.argument, 'id'));
    await rejects(service.complete('t1', 'alice', null), worklist.InvalidArgumentError, (e) => assert.equal(e.argument, 'decision'));
    await rejects(service.claimRun('p', 's', 'r', 'w', 0), worklist.InvalidArgumentError, (e) => assert.equal(e.argument, 'ttl'));
  });

  it('54000: the document\'s size and the limit', async () => {
    const small = new Worklist({ tenant: TENANT, database: DB, options: '-c worklist.max_document_size=100' });
    try {
      await rejects(small.openTask('big', 'c', ['r'], { payload: { text: 'x'.repeat(200) } }),
        worklist.LimitExceededError, (e) => {
          assert.equal(e.argument, 'payload');
          assert.equal(e.limit, 100);
          assert.ok(e.size > 200);
        });
    } finally {
      await small.end();
    }
  });

  it('22P02 and the rest: DatabaseError, permanent', async () => {
    await rejects(service.setState('t1', 'bogus'), worklist.DatabaseError, (e) => {
      assert.equal(e.code, '22P02');
      assert.equal(e.transient, false);
    });
  });

  it('ConfigurationError: no such database, a verb the server lacks', async () => {
    const nowhere = new Worklist({ tenant: TENANT, database: 'worklist_clients_missing' });
    try {
      await rejects(nowhere.task('t1'), worklist.ConfigurationError, (e) => assert.equal(e.code, '3D000'));
    } finally {
      await nowhere.end();
    }
    const has04 = (await sql("SELECT count(*)::int AS n FROM pg_proc WHERE proname = 'claim_next_run'"))[0].n > 0;
    if (!has04) {
      await rejects(service.claimNextRun('p', 'w', 1000), worklist.ConfigurationError, (e) => assert.equal(e.code, '42883'));
    }
  });

  it('ConnectionLostError: the backend terminated; transient', async () => {
    const client = await service.connect();
    try {
      const one = service.on(client);
      const [{ pid }] = (await client.query('SELECT pg_backend_pid() AS pid')).rows;
      await sql('SELECT pg_terminate_backend($1)', [pid]);
      await rejects(one.task('t1'), worklist.ConnectionLostError, (e) => assert.equal(e.transient, true));
      assert.ok(worklist.isTransient(await one.task('t1').catch((e) => e)));
    } finally {
      client.release(true);
    }
    assert.equal((await service.task('t1')).id, 't1');
  });

  it('SerializationError: 40001 under REPEATABLE READ; transient', async () => {
    const client = await service.connect();
    try {
      const one = service.on(client);
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      await one.task('free');
      await service.claim('free', 'bob', ['reviewer']);
      await rejects(one.claim('free', 'carol', ['reviewer']), worklist.SerializationError, (e) => {
        assert.equal(e.code, '40001');
        assert.equal(e.transient, true);
      });
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
  });
});

describe('index.d.ts', () => {
  it('declares every verb and every export', async () => {
    const { readFile } = await import('node:fs/promises');
    const { VERBS } = await import('../lib/sql.js');
    const dts = await readFile(new URL('../index.d.ts', import.meta.url), 'utf8');
    for (const method of Object.keys(VERBS)) assert.match(dts, new RegExp(`\\n  ${method}\\(`), method);
    for (const name of Object.keys(worklist)) {
      assert.match(dts, new RegExp(`export (class|function) ${name}\\b`), name);
    }
  });
});
