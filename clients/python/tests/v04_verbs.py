"""The 0.4 verbs (sections 1a and 3a of the contract) through Client, WL008,
and the run worker on claim_next_run, park_run and conclude_run.  Needs a
server with worklist 0.4; a test of verbs the server does not have yet is
skipped (and says so).

    python3 -m unittest -v v04_verbs
"""
import threading
import time
import unittest
from datetime import datetime, timedelta, timezone

from database import TENANT, Database

import worklist

DB = Database('v04')


def setUpModule():
    DB.create()


def tearDownModule():
    DB.drop()


def needs(*verbs):
    """Skips the test unless the server has every verb named."""
    def wrap(test):
        def run(self):
            rows = DB.sql("SELECT p.proname FROM pg_catalog.pg_proc p WHERE p.pronamespace ="
                          " 'worklist'::pg_catalog.regnamespace AND p.proname = ANY(%s)",
                          (list(verbs),))
            missing = set(verbs) - {r[0] for r in rows}
            if missing:
                self.skipTest('the server lacks %s' % ', '.join(sorted(missing)))
            return test(self)
        run.__name__ = test.__name__
        return run
    return wrap


class Tasks04(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.wl = worklist.Client(TENANT, dbname=DB.name)

    def test_1_history_and_note(self):
        self.wl.open_task('h1', 'c', ['r'])
        self.wl.claim('h1', 'alice', ['r'])
        n = self.wl.note('h1', 'alice', 'looked at it')
        self.assertEqual((n.task_id, n.seq, n.event, n.actor, n.detail),
                         ('h1', 3, 'noted', 'alice', {'body': 'looked at it'}))
        self.assertEqual([e.event for e in self.wl.task_history('h1')],
                         ['opened', 'claimed', 'noted'])
        self.assertEqual([e.seq for e in self.wl.task_history('h1', after=1, lim=1)], [2])

    @needs('hand_over', 'update_task', 'claims')
    def test_2_hand_over_update_claims(self):
        self.assertEqual(self.wl.hand_over('h1', 'alice', 'bob', ['r']).holder, 'bob')
        with self.assertRaises(worklist.NotHeldError):
            self.wl.hand_over('h1', 'alice', 'carol', ['r'])
        due = datetime.now(timezone.utc) + timedelta(hours=1)
        u = self.wl.update_task('h1', priority=7, due_at=due)
        self.assertEqual((u.priority, u.due_at), (7, due))
        self.assertEqual([t.id for t in self.wl.claims(lim=10)], ['h1'])

    def test_3_skip(self):
        for i in ('m1', 'm2', 'm3'):
            self.wl.open_task(i, 'c', ['rm'])
        self.assertEqual(self.wl.claim_next('w', ['rm'], skip=['m1']).id, 'm2')
        self.assertTrue(self.wl.has_claim_next_skip())

    @needs('claim_many', 'complete_many')
    def test_4_batches(self):
        self.assertEqual([t.id for t in self.wl.claim_many('w', ['rm'], 5, skip=[])], ['m1', 'm3'])
        settled = self.wl.complete_many('w', ['m1', 'm2', 'm3'], [{'ok': 1}, 'two', 3])
        self.assertEqual(settled, [worklist.Settled('m1', True), worklist.Settled('m2', True),
                                   worklist.Settled('m3', True)])


class Runs04(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.wl = worklist.Client(TENANT, dbname=DB.name)

    def test_park_claim_next_conclude(self):
        wl = self.wl
        wl.write_checkpoint('q', 's', 'r1', 'c0', {'step': 0}, metadata={'source': 'loop'})
        claimed = wl.claim_next_run('q', 'agent-1', timedelta(minutes=1))
        self.assertEqual((claimed.run, claimed.holder), ('r1', 'agent-1'))
        self.assertIsNone(wl.claim_next_run('q', 'agent-2', timedelta(minutes=1)))
        wl.open_task('ask-1', 'c', ['r'], run_id='r1')
        parked = wl.park_run('q', 's', 'r1', 'c1', ['ask-1'], fence=claimed.fence,
                             body={'waiting': True})
        self.assertEqual((parked.park_tasks, parked.park_request), (['ask-1'], 'tasks'))
        wl.claim('ask-1', 'alice', ['r'])
        wl.complete('ask-1', 'alice', {'approved': True})
        resumed = wl.claim_next_run('q', 'agent-2', '1 minute', session='s')
        self.assertEqual(resumed.run, 'r1')
        with self.assertRaises(worklist.StaleFenceError):
            wl.conclude_run('q', 's', 'r1', fence=claimed.fence)
        self.assertEqual(wl.conclude_run('q', 's', 'r1', fence=resumed.fence), 0)
        with self.assertRaises(worklist.RunConcludedError) as caught:
            wl.claim_run('q', 's', 'r1', 'agent-3', '1 minute')
        self.assertEqual(caught.exception.sqlstate, 'WL008')
        page = wl.list_durable_runs(project='q', concluded=True)
        self.assertEqual([e.run for e in page.entries], ['r1'])
        self.assertIsNotNone(page.entries[0].concluded_at)

    def test_run_worker_parks_and_resumes(self):
        wl = self.wl
        wl.write_checkpoint('w', 's', 'refund-9', 'start', {'amount': 120})
        wl.open_task('approve-9', 'refund-9', ['finance'], run_id='refund-9')
        seen = []

        def handler(ctx):
            seen.append((ctx.checkpoint.checkpoint_id, [t.state for t in ctx.tasks]))
            if ctx.checkpoint.checkpoint_id == 'start':
                ctx.park('asked', ['approve-9'], body={'asked': True})
                return
            ctx.write('paid', {'approved': ctx.tasks[0].decision['approved']})

        def on_event(name, info):
            if name == 'concluded':
                worker.stop()
        worker = worklist.RunWorker(worklist.Client(TENANT, dbname=DB.name), 'w', 'agent-w',
                                    handler, ttl=2, poll_seconds=0.1, on_event=on_event)
        thread = threading.Thread(target=worker.run, kwargs={'handle_signals': False})
        thread.start()
        deadline = time.monotonic() + 10
        while not seen and thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        if not seen:
            worker.stop()
            thread.join(5)
            self.fail('the handler was not called within 10 s')
        wl.claim('approve-9', 'alice', ['finance'])
        wl.complete('approve-9', 'alice', {'approved': True})
        thread.join(20)
        self.assertFalse(thread.is_alive())
        self.assertEqual(seen, [('start', []), ('asked', ['completed'])])
        self.assertEqual(wl.read_checkpoint('w', 's', 'refund-9', 'paid').body, {'approved': True})


if __name__ == '__main__':
    unittest.main()


class State04(unittest.TestCase):
    """The verbs that persist an agent framework's state (section 3b)."""
    @classmethod
    def setUpClass(cls):
        cls.wl = worklist.Client(TENANT, dbname=DB.name)

    @needs('latest_checkpoint', 'newest_checkpoints', 'put_writes', 'pending_writes',
           'put_values', 'run_values', 'delete_run')
    def test_state_verbs(self):
        wl = self.wl
        self.assertIsNone(wl.latest_checkpoint('g', 't', 'r'))
        t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
        wl.write_checkpoint('g', 't', 'r', 'a', {'n': 1}, created_at=t0,
                            metadata={'step': 1})
        wl.write_checkpoint('g', 't', 'r', 'b', {'n': 2}, created_at=t0 + timedelta(seconds=1),
                            metadata={'step': 2}, parent_checkpoint_id='a')
        latest = wl.latest_checkpoint('g', 't', 'r')
        self.assertEqual((latest.checkpoint_id, latest.parent_checkpoint_id, latest.metadata),
                         ('b', 'a', {'step': 2}))
        self.assertEqual([c.checkpoint_id for c in wl.newest_checkpoints('g')], ['b', 'a'])
        self.assertEqual([c.checkpoint_id for c in wl.newest_checkpoints(
            'g', session='t', run='r', before_checkpoint_id='b')], ['a'])
        self.assertEqual([c.checkpoint_id for c in wl.newest_checkpoints(
            'g', metadata={'step': 1}, lim=5)], ['a'])
        with self.assertRaises(worklist.InvalidArgumentError):
            wl.newest_checkpoints('g', run='r')
        self.assertEqual(wl.put_writes('g', 't', 'r', 'b', 'task1', [1, 0], ['y', 'x'],
                                       [{'v': 1}, 'zero']), 2)
        self.assertEqual(wl.put_writes('g', 't', 'r', 'b', 'task1', [0], ['x'], ['again']), 0)
        writes = wl.pending_writes('g', 't', 'r', 'b')
        self.assertEqual([(w.task_id, w.idx, w.channel, w.value, w.task_path) for w in writes],
                         [('task1', 0, 'x', 'zero', ''), ('task1', 1, 'y', {'v': 1}, '')])
        self.assertEqual(wl.put_values('g', 't', 'r', ['x', 'y'], ['1', '1'], [[1, 2], None]), 2)
        self.assertEqual([(v.channel, v.version, v.value)
                          for v in wl.run_values('g', 't', 'r', ['y', 'x', 'x'], ['1', '1', '9'])],
                         [('y', '1', None), ('x', '1', [1, 2])])
        lease = wl.claim_run('g', 't', 'r', 'holder', '1 minute')
        with self.assertRaises(worklist.StaleFenceError):
            wl.put_writes('g', 't', 'r', 'b', 'task2', [0], ['x'], [1], fence=lease.fence + 1)
        with self.assertRaises(worklist.StaleFenceError):
            wl.delete_run('g', 't', 'r')
        self.assertEqual(wl.delete_run('g', 't', 'r', fence=lease.fence), 2)
        self.assertIsNone(wl.latest_checkpoint('g', 't', 'r'))
        self.assertEqual(wl.pending_writes('g', 't', 'r', 'b'), [])
        with self.assertRaises(worklist.StaleFenceError):
            wl.write_checkpoint('g', 't', 'r', 'c', {}, fence=lease.fence)
