"""TaskWorker against the server: the handler asked once per decision, tasks
given up skipped, known decisions sent straight to complete after held(),
and what a stop gives back."""
import threading
import unittest

from database import TENANT, Database

import worklist

DB = Database('worker')


def setUpModule():
    DB.create()


def tearDownModule():
    DB.drop()


class Worker(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.wl = worklist.Client(TENANT, dbname=DB.name)

    @classmethod
    def tearDownClass(cls):
        cls.wl.close()

    def work(self, actor, roles, handler, until, decided=None):
        """Runs a worker until until(events) holds; returns it and its events."""
        events = []

        def on_event(name, info):
            events.append((name, info.get('id')))
            if until(events):
                worker.stop()
        worker = worklist.TaskWorker(self.wl, actor, roles, handler, poll_seconds=0.1,
                                     on_event=on_event)
        worker.decided.update(decided or {})
        timer = threading.Timer(10, worker.stop)
        timer.start()
        worker.run(handle_signals=False)
        timer.cancel()
        return worker, events

    @staticmethod
    def has(name, task_id):
        return lambda events: (name, task_id) in events

    def test_completes_asking_once_per_task(self):
        for i in ('a1', 'a2', 'a3'):
            self.wl.open_task(i, 'c', ['ra'], payload={'n': i})
        worker, events = self.work('wa', ['ra'], lambda t, ctx: {'ok': t.payload['n']},
                                   lambda ev: sum(1 for e in ev if e[0] == 'completed') == 3)
        self.assertEqual(worker.handler_calls, 3)
        for i in ('a1', 'a2', 'a3'):
            t = self.wl.task(i)
            self.assertEqual((t.state, t.decided_by, t.decision), ('completed', 'wa', {'ok': i}))
        self.assertEqual([e[0] for e in events[:2]], ['connected', 'listening'])

    def test_given_up_released_and_skipped(self):
        self.wl.open_task('b1', 'c', ['rb'], priority=2)
        self.wl.open_task('b2', 'c', ['rb'], priority=1)
        self.wl.open_task('b3', 'c', ['rb'], priority=0)
        seen = []

        def handler(t, ctx):
            seen.append(t.id)
            if t.id == 'b1':
                return None
            if t.id == 'b2':
                raise RuntimeError('cannot')
            return 'yes'
        worker, events = self.work('wb', ['rb'], handler, self.has('completed', 'b3'))
        self.assertEqual(seen, ['b1', 'b2', 'b3'])
        self.assertIn(('failed', 'b2'), events)
        self.assertEqual([self.wl.task(i).state for i in ('b1', 'b2', 'b3')],
                         ['open', 'open', 'completed'])

    def test_known_decision_goes_to_complete(self):
        self.wl.open_task('c1', 'c', ['rc'])
        self.wl.open_task('c2', 'c', ['rc'])
        self.wl.claim('c1', 'wc', ['rc'])
        self.wl.claim('c2', 'wc', ['rc'])
        worker, events = self.work('wc', ['rc'], lambda t, ctx: 'from the handler',
                                   lambda ev: sum(1 for e in ev if e[0] == 'completed') == 2,
                                   decided={'c1': 'decided before'})
        self.assertEqual(worker.handler_calls, 1)
        self.assertEqual(self.wl.task('c1').decision, 'decided before')
        self.assertEqual(self.wl.task('c2').decision, 'from the handler')
        self.assertIn(('recovered', 'c1'), events)
        self.assertIn(('resending', 'c1'), events)

    def test_decision_settled_by_somebody_else_is_lost(self):
        self.wl.open_task('d1', 'c', ['rd'])
        self.wl.claim('d1', 'wd', ['rd'])
        self.wl.complete('d1', 'wd', 'first')
        worker, events = self.work('wd', ['rd'], lambda t, ctx: 'x', self.has('lost', 'd1'),
                                   decided={'d1': 'second'})
        self.assertEqual(worker.decided, {})
        self.assertEqual(self.wl.task('d1').decision, 'first')

    def test_stop_gives_back_what_has_not_started(self):
        self.wl.open_task('e1', 'c', ['re'])
        self.wl.open_task('e2', 'c', ['re'])
        self.wl.claim('e1', 'we', ['re'])
        self.wl.claim('e2', 'we', ['re'])
        holder = {}

        def handler(t, ctx):
            holder['worker'].stop()
            self.assertTrue(ctx.stopping)
            return 'done %s' % t.id
        worker = worklist.TaskWorker(self.wl, 'we', ['re'], handler, poll_seconds=0.1)
        holder['worker'] = worker
        worker.run(handle_signals=False)
        self.assertEqual(worker.handler_calls, 1)
        self.assertEqual(self.wl.task('e1').state, 'completed')
        e2 = self.wl.task('e2')
        self.assertEqual((e2.state, e2.holder), ('open', None))

    def test_permanent_error_ends_run(self):
        stranger = worklist.Client(TENANT, dbname=DB.name, user=DB.roles['stranger'])
        worker = worklist.TaskWorker(stranger, 'x', ['r'], lambda t, ctx: 1)
        with self.assertRaises(worklist.InsufficientPrivilegeError):
            worker.run(handle_signals=False)


if __name__ == '__main__':
    unittest.main()
