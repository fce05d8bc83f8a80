"""Every 0.3 verb of Client, every error class provoked from the server, the
conversions of arguments and results, and the tenant set per transaction."""
import threading
import unittest
from datetime import datetime, timedelta, timezone

import psycopg2
import psycopg2.pool

from database import TENANT, Database

import worklist
from worklist import Client

DB = Database('client')
HOUR = timedelta(hours=1)


def now():
    return datetime.now(timezone.utc)


def setUpModule():
    DB.create()


def tearDownModule():
    DB.drop()


class Base(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.service = Client(TENANT, dbname=DB.name, user=DB.roles['service'])
        cls.su = Client(TENANT, dbname=DB.name)

    @classmethod
    def tearDownClass(cls):
        cls.service.close()
        cls.su.close()


class Tasks(Base):
    def test_1_open_task(self):
        due = now() + HOUR
        t = self.service.open_task('t1', 'case-1', ['reviewer'], run_id='run-1',
                                   payload={'amount': 120, 'tags': ['a']}, priority=5, due_at=due,
                                   expiry_policy='escalate', excluded=('mallory',),
                                   escalation_roles=['lead'], claim_timeout=timedelta(seconds=90))
        self.assertIsInstance(t, worklist.Task)
        self.assertEqual((t.id, t.case_id, t.run_id, t.state), ('t1', 'case-1', 'run-1', 'open'))
        self.assertEqual((t.roles, t.excluded, t.escalation_roles), (['reviewer'], ['mallory'], ['lead']))
        self.assertEqual(t.priority, 5)
        self.assertEqual(t.payload, {'amount': 120, 'tags': ['a']})
        self.assertEqual(t.due_at, due)
        self.assertIsNotNone(t.due_at.tzinfo)
        self.assertEqual(t.expiry_policy, 'escalate')
        self.assertEqual(t.claim_timeout, timedelta(seconds=90))
        self.assertIsNone(t.holder)
        again = self.service.open_task('t1', 'other', ['x'], claim_timeout='2 minutes')
        self.assertEqual(again.case_id, 'case-1')
        with self.assertRaises(TypeError):
            self.service.open_task('t0', 'c', ['r'], due_at=datetime.now())
        with self.assertRaises(TypeError):
            self.service.open_task('t0', 'c', 'reviewer')

    def test_2_task(self):
        self.assertEqual(self.service.task('t1').id, 't1')
        self.assertIsNone(self.service.task('missing'))

    def test_3_claims(self):
        self.service.open_task('t2', 'case-1', ['reviewer'], priority=9)
        self.assertEqual([t.id for t in self.service.queue(['reviewer'], lim=10, actor='alice')],
                         ['t2', 't1'])
        self.assertEqual([t.id for t in self.service.for_case('case-1')], ['t2', 't1'])
        c = self.service.claim_next('alice', ['reviewer'])
        self.assertEqual((c.id, c.holder), ('t2', 'alice'))
        same = self.service.claim('t2', 'alice', ['reviewer'])
        self.assertEqual(same.claimed_at, c.claimed_at)
        self.assertEqual([t.id for t in self.service.held('alice')], ['t2'])
        self.assertEqual(self.service.held('nobody', lim=5), [])
        self.service.release('t2', 'alice')
        self.assertEqual(self.service.task('t2').state, 'open')
        self.assertIsNone(self.service.claim_next('alice', ['nobody-role']))
        pending = DB.sql("SELECT count(*) FROM worklist.task WHERE tenant = %s"
                         " AND state IN ('open', 'claimed', 'escalated')", (TENANT,))[0][0]
        self.assertEqual(self.service.open_count(), pending)

    def test_4_settle(self):
        self.service.claim('t2', 'alice', ['reviewer'])
        self.assertEqual(self.service.take_over('t2', 'alice', 'bob', ['reviewer']).holder, 'bob')
        self.assertIs(self.service.complete('t2', 'bob', 'approve'), True)
        self.assertIs(self.service.complete('t2', 'bob', 'approve'), True)
        self.assertIs(self.service.complete('t2', 'bob', 'reject'), False)
        done = self.service.task('t2')
        self.assertEqual((done.decision, done.decided_by), ('approve', 'bob'))
        self.service.open_task('t3', 'case-3', ['reviewer'])
        self.assertEqual(self.service.escalate('t3').state, 'escalated')
        self.assertIs(self.service.set_state('t3', 'withdrawn'), True)
        self.assertIs(self.service.set_state('t3', 'expired'), False)

    def test_5_withdraw_overdue_sweep(self):
        self.service.open_task('t4', 'case-4', ['reviewer'], run_id='run-4')
        self.service.open_task('t5', 'case-4', ['reviewer'], run_id='run-4')
        self.assertEqual(self.service.withdraw_run('run-4', ['t4', 't5', 'nope']), 2)
        self.service.open_task('t6', 'case-6', ['reviewer'], due_at=now() - timedelta(seconds=1))
        self.assertEqual([t.id for t in self.service.overdue(now=now(), lim=10)], ['t6'])
        s = self.service.sweep(now=now(), lim=10)
        self.assertEqual(s, worklist.SweepResult(1, 0, 0, 0, 0, 0, 0))
        self.assertEqual(self.service.task('t6').decision, {'policy': 'deny'})


class Tickets(Base):
    def test_tickets(self):
        f = self.service.open_ticket('k1', 'dana', 'Login fails', body={'os': 'linux'},
                                     authorities=['lead'], open_deadline=now() + HOUR,
                                     confirm_window=timedelta(hours=1), ladder=['1 hour', 4 * HOUR])
        self.assertEqual((f.ticket, f.state, f.escalation_rung), ('k1', 'open', 0))
        r = self.service.report('k1', 'agent-a', 'working', not_before=now() + HOUR, reason='on it')
        self.assertEqual((r.state, r.live_actors), ('working', ['agent-a']))
        self.assertIsInstance(r.deadline, datetime)
        self.assertEqual(self.service.close_ticket('k1', 'agent-a', 'done').unauthorized_close,
                         ['agent-a'])
        closed = self.service.close_ticket('k1', 'dana', 'done', reason='fixed')
        self.assertEqual(closed.confirmation, {'kind': 'explicit', 'confirmed_by': 'dana'})
        self.assertEqual(self.service.ticket_state('k1', now=now()).closed_by, 'dana')
        h = self.service.ticket_history('k1')
        self.assertEqual([(e.seq, e.kind, e.value) for e in h],
                         [(1, 'participation', 'working'), (2, 'outcome', 'done'), (3, 'outcome', 'done')])
        self.service.open_ticket('k2', 'dana', 'Nobody said when')
        self.assertEqual([t.ticket for t in self.service.overdue_tickets(lim=10)], ['k2'])


class Runs(Base):
    def test_1_leases_and_checkpoints(self):
        lease = self.service.claim_run('p', 's', 'r1', 'w1', timedelta(minutes=1))
        self.assertIsInstance(lease.fence, int)
        self.assertEqual(lease.holder, 'w1')
        self.assertIsNone(self.service.claim_run('p', 's', 'r1', 'w2', '1 minute'))
        epoch = datetime(1970, 1, 1, tzinfo=timezone.utc)
        self.service.write_checkpoint('p', 's', 'r1', 'c1', {'i': 1}, fence=lease.fence,
                                      run_created_at=epoch)
        # a checkpoint whose park fields are all NULL is a checkpoint
        c = self.service.read_checkpoint('p', 's', 'r1', 'c1')
        self.assertEqual((c.checkpoint_id, c.body, c.park_request), ('c1', {'i': 1}, None))
        self.assertEqual(c.run_created_at, epoch)
        self.assertIsNone(self.service.read_checkpoint('p', 's', 'r1', 'missing'))
        self.service.release_run('p', 's', 'r1', lease.fence)
        self.assertGreater(self.service.claim_run('p', 's', 'r1', 'w2', timedelta(minutes=1)).fence,
                           lease.fence)
        for cid in ('c2', 'c3', 'c4'):
            self.service.write_checkpoint('p', 's', 'r1', cid, {'id': cid})
        self.assertEqual([c.checkpoint_id for c in self.service.list_checkpoints('p', 's', 'r1')],
                         ['c1', 'c2', 'c3', 'c4'])
        self.service.delete_checkpoint('p', 's', 'r1', 'c2')
        self.service.delete_checkpoint('p', 's', 'r1', 'c2')
        self.assertEqual(self.service.prune_checkpoints('p', 's', 'r1', 1), 2)

    def test_2_listing(self):
        parked_at = now()
        self.service.write_checkpoint('p', 's', 'r2', 'c1', {}, park_request='approve',
                                      parked_at=parked_at, park_deadline=now() + HOUR)
        self.service.write_checkpoint('p', 's', 'r3', 'c1', {})
        page = self.service.list_durable_runs(project='p', lim=2)
        self.assertEqual([e.run for e in page.entries], ['r1', 'r2'])
        self.assertIsInstance(page.cursor, str)
        r1, r2 = page.entries
        self.assertIsInstance(r1, worklist.DurableRun)
        self.assertIsInstance(r1.claim_fence, int)
        self.assertEqual((r1.checkpoint_count, r1.claim_expired, r1.park_state), (1, False, None))
        self.assertEqual((r2.park_state, r2.parked_at), ('outstanding', parked_at))
        rest = self.service.list_durable_runs(project='p', lim=2, cursor=page.cursor)
        self.assertEqual(([e.run for e in rest.entries], rest.cursor), (['r3'], None))
        parked = self.service.list_durable_runs(project='p', park=['outstanding', 'expired'])
        self.assertEqual([e.run for e in parked.entries], ['r2'])
        self.assertEqual(self.service.list_durable_runs(project='none'),
                         worklist.DurableRunPage([], None))
        by_age = self.service.list_durable_runs(project='p', session='s', order_by='created_at',
                                                claimed=False, now=now())
        self.assertEqual([e.run for e in by_age.entries], ['r2', 'r3'])


class Tenancy(Base):
    def test_grant_revoke_erase(self):
        other = Client('ct-erase', dbname=DB.name)
        other.grant_tenant('ct-erase', DB.roles['stranger'], kind='service')
        stranger = Client('ct-erase', dbname=DB.name, user=DB.roles['stranger'])
        stranger.open_task('e1', 'c', ['r'])
        other.revoke_tenant('ct-erase', DB.roles['stranger'])
        with self.assertRaises(worklist.InsufficientPrivilegeError):
            stranger.task('e1')
        self.assertEqual(other.erase_tenant(), 2)  # the task and its history event
        self.assertIsNone(other.task('e1'))
        stranger.close()
        other.close()

    def test_retention(self):
        self.service.set_retention(tasks='90 days', runs=timedelta(days=30))
        self.assertEqual(self.service.retention(),
                         worklist.Retention(timedelta(days=90), None, timedelta(days=30)))
        self.service.set_retention()
        self.assertEqual(self.service.retention(), worklist.Retention(None, None, None))

    def test_channels_stats_sweeper(self):
        ch = self.su.channel()
        self.assertRegex(ch, r'^worklist_[0-9a-f]{32}$')
        self.assertEqual(self.service.channel(), ch)
        self.assertNotEqual(self.su.rotate_channel(), ch)
        stats = self.service.stats()
        self.assertEqual(stats['tenant'], TENANT)
        self.assertIsInstance(stats['tasks']['open'], int)
        self.assertIsInstance(self.su.start_sweeper(), int)

    def test_tenant_per_transaction(self):
        pool = psycopg2.pool.ThreadedConnectionPool(1, 1, '', dbname=DB.name)
        try:
            a = Client(TENANT, pool=pool)
            b = Client('ct-other', pool=pool)
            b.open_task('t1', 'other-case', ['reviewer'])
            self.assertEqual(a.task('t1').case_id, 'case-1')
            self.assertEqual(b.task('t1').case_id, 'other-case')
            conn = pool.getconn()
            with conn.cursor() as cur:
                cur.execute("SELECT current_setting('worklist.tenant')")
                self.assertEqual(cur.fetchone()[0], 'default')
            pool.putconn(conn)
            self.assertEqual(b.erase_tenant(), 2)  # the task and its history event
        finally:
            pool.closeall()

    def test_transaction(self):
        with self.assertRaises(ZeroDivisionError):
            with self.service.transaction() as tx:
                tx.open_task('tx1', 'c', ['reviewer'])
                self.assertEqual(tx.task('tx1').id, 'tx1')
                1 / 0
        self.assertIsNone(self.service.task('tx1'))
        with self.service.transaction() as tx:
            tx.open_task('tx1', 'c', ['reviewer'])
        self.assertEqual(self.service.task('tx1').state, 'open')


class Errors(Base):
    def check(self, cls, call, *args, **kwargs):
        with self.assertRaises(cls) as caught:
            call(*args, **kwargs)
        self.assertIsInstance(caught.exception, worklist.WorklistError)
        return caught.exception

    def test_wl001(self):
        e = self.check(worklist.NotFoundError, self.service.claim, 'ghost', 'alice', ['checker'])
        self.assertEqual((e.sqlstate, e.pgcode, e.kind, e.id, e.transient),
                         ('WL001', 'WL001', 'task', 'ghost', False))
        e = self.check(worklist.NotFoundError, self.service.ticket_state, 'ghost')
        self.assertEqual(e.kind, 'ticket')

    def test_wl002_wl003(self):
        self.service.open_task('x1', 'c', ['checker'], excluded=['mallory'])
        e = self.check(worklist.ExcludedError, self.service.claim, 'x1', 'mallory', ['checker'])
        self.assertEqual((e.actor, e.id), ('mallory', 'x1'))
        e = self.check(worklist.WrongRoleError, self.service.claim, 'x1', 'alice', ['cook'])
        self.assertEqual((e.actor, e.id), ('alice', 'x1'))

    def test_wl004(self):
        self.service.open_task('x2', 'c', ['checker'])
        self.service.set_state('x2', 'withdrawn')
        e = self.check(worklist.NotPendingError, self.service.claim, 'x2', 'alice', ['checker'])
        self.assertEqual((e.id, e.state), ('x2', 'withdrawn'))

    def test_wl005_wl006(self):
        self.service.open_task('h"1', 'c', ['checker'])
        self.service.claim('h"1', 'a "quoted" holder', ['checker'])
        e = self.check(worklist.AlreadyClaimedError, self.service.claim, 'h"1', 'alice', ['checker'])
        self.assertEqual((e.id, e.holder), ('h"1', 'a "quoted" holder'))
        e = self.check(worklist.NotHeldError, self.service.complete, 'h"1', 'alice', {})
        self.assertEqual((e.actor, e.holder), ('alice', 'a "quoted" holder'))
        self.service.open_task('free', 'c', ['checker'])
        e = self.check(worklist.NotHeldError, self.service.release, 'free', 'alice')
        self.assertIsNone(e.holder)

    def test_wl007(self):
        lease = self.service.claim_run('p', 's', 'f1', 'w1', timedelta(minutes=1))
        e = self.check(worklist.StaleFenceError, self.service.write_checkpoint, 'p', 's', 'f1', 'c',
                       {}, fence=lease.fence - 1)
        self.assertEqual((e.run, e.fence, e.current_fence), ('f1', lease.fence - 1, lease.fence))
        e = self.check(worklist.StaleFenceError, self.service.write_checkpoint, 'p', 's', 'never',
                       'c', {}, fence=7)
        self.assertEqual((e.fence, e.current_fence), (7, None))

    def test_wl007_float_fence(self):
        # a float is refused before it is sent: the cast would round it,
        # and a stale fence of 9.5 pass as the current 10
        lease = self.service.claim_run('p', 's', 'f2', 'w1', timedelta(minutes=1))
        for fence in (lease.fence - 0.5, float(lease.fence), True):
            with self.assertRaises(TypeError):
                self.service.write_checkpoint('p', 's', 'f2', 'c', {}, fence=fence)
        with self.assertRaises(TypeError):
            self.service.put_writes('p', 's', 'f2', 'c', 't', [0.5], ['ch'], [1], fence=lease.fence)
        self.assertIsNone(self.service.read_checkpoint('p', 's', 'f2', 'c'))

    def test_unsendable_text(self):
        # NUL and a lone surrogate: an InvalidArgumentError naming the
        # argument, before anything is sent
        for bad in ('a\x00b', 'a\ud800'):
            e = self.check(worklist.InvalidArgumentError, self.service.open_task, bad, 'c', ['checker'])
            self.assertEqual(e.argument, 'id')
            self.assertIsNone(e.sqlstate)
            e = self.check(worklist.InvalidArgumentError, self.service.open_task, 'ok', 'c', ['checker', bad])
            self.assertEqual(e.argument, 'roles')
        self.assertIsNone(self.service.task('ok'))

    def test_42501(self):
        stranger = Client(TENANT, dbname=DB.name, user=DB.roles['stranger'])
        member = Client(TENANT, dbname=DB.name, user=DB.roles['member'])
        e = self.check(worklist.InsufficientPrivilegeError, stranger.task, 't1')
        self.assertEqual((e.sqlstate, e.tenant), ('42501', TENANT))
        e = self.check(worklist.InsufficientPrivilegeError, member.claim, 't1', 'bob', ['checker'])
        self.assertEqual(e.argument, 'actor')
        stranger.close()
        member.close()

    def test_22023(self):
        self.assertEqual(self.check(worklist.InvalidArgumentError, self.service.open_task, '', 'c',
                                    ['r']).argument, 'id')
        self.assertEqual(self.check(worklist.InvalidArgumentError, self.service.complete, 't1',
                                    'alice', None).argument, 'decision')
        self.assertEqual(self.check(worklist.InvalidArgumentError, self.service.claim_run, 'p', 's',
                                    'r', 'w', timedelta(0)).argument, 'ttl')

    def test_54000(self):
        small = Client(TENANT, dbname=DB.name, options='-c worklist.max_document_size=100')
        e = self.check(worklist.LimitExceededError, small.open_task, 'big', 'c', ['r'],
                       payload={'text': 'x' * 200})
        self.assertEqual((e.argument, e.limit), ('payload', 100))
        self.assertGreater(e.size, 200)
        small.close()

    def test_other_sqlstates(self):
        e = self.check(worklist.DatabaseError, self.service.set_state, 't1', 'bogus')
        self.assertEqual((e.sqlstate, e.transient), ('22P02', False))

    def test_configuration(self):
        nowhere = Client(TENANT, dbname='worklist_clients_missing')
        self.check(worklist.ConfigurationError, nowhere.task, 't1')
        if not DB.sql("SELECT count(*) FROM pg_proc WHERE proname = 'claim_next_run'")[0][0]:
            e = self.check(worklist.ConfigurationError, self.service.claim_next_run, 'p', 'w', '1 s')
            self.assertEqual(e.sqlstate, '42883')

    def test_connection_lost(self):
        self.service.open_task('cl1', 'c', ['checker'])
        conn = self.service.connect()
        one = self.service.on(conn)
        with conn.cursor() as cur:
            cur.execute('SELECT pg_backend_pid()')
            pid = cur.fetchone()[0]
        DB.sql('SELECT pg_terminate_backend(%s)', (pid,))
        e = self.check(worklist.ConnectionLostError, one.task, 'cl1')
        self.assertTrue(e.transient)
        self.assertIsInstance(e, worklist.TransientError)
        self.service.disconnect(conn, broken=True)
        # a client of its own connects again
        own = Client(TENANT, dbname=DB.name)
        own.task('cl1')
        DB.sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
               " WHERE datname = %s AND pid <> pg_backend_pid() AND usename = current_user"
               " AND backend_type = 'client backend' AND query NOT LIKE '%%pg_terminate%%'",
               (DB.name,))
        with self.assertRaises(worklist.ConnectionLostError):
            own.task('cl1')
        self.assertEqual(own.task('cl1').id, 'cl1')
        own.close()

    def test_serialization(self):
        self.service.open_task('ser', 'c', ['checker'])
        conn = self.service.connect()
        conn.autocommit = False
        conn.set_session(isolation_level='REPEATABLE READ')
        one = self.service.on(conn)
        one.task('ser')
        self.service.claim('ser', 'bob', ['checker'])
        e = self.check(worklist.SerializationError, one.claim, 'ser', 'carol', ['checker'])
        self.assertEqual((e.sqlstate, e.transient), ('40001', True))
        conn.rollback()
        conn.close()


if __name__ == '__main__':
    unittest.main()
