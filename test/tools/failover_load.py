#!/usr/bin/python3
"""Load for the managed-failover test (test/deploy/920_failover.pl).

  failover_load.py DSN WORKERS TENANT

WORKERS connections (each reconnecting whenever its connection fails;
the DSN names every node, with target_session_attrs=read-write, so that a
connection finds the primary, whichever node it is) each repeat, in the
tenant, until standard input is closed:

  open_task, claim and complete a task of its own;
  claim_run a run of its own, then write two checkpoints under its fence;

each call in a transaction of its own.  Every call whose commit returned
is printed as one JSON line, as it returns:

  {"kind": "completion", "task", "actor", "start", "end"}
  {"kind": "claim", "run", "holder", "fence", "start", "end"}
  {"kind": "checkpoint", "run", "checkpoint", "fence", "start", "end"}

("start" and "end" are epoch seconds taken before the call and after its
commit returned), and every failed call as {"kind": "error", "worker",
"code", "message", "at"}: after one, the worker reconnects and starts
again with new ids.  A call that failed may or may not have committed; it
is not acknowledged, and the test asks nothing of it.
"""
import json
import sys
import threading
import time

import psycopg2
import psycopg2.extensions

lock = threading.Lock()
stopping = threading.Event()


def emit(record):
    with lock:
        sys.stdout.write(json.dumps(record) + "\n")
        sys.stdout.flush()


def connect(dsn, tenant):
    while not stopping.is_set():
        try:
            conn = psycopg2.connect(dsn)
            conn.set_isolation_level(psycopg2.extensions.ISOLATION_LEVEL_AUTOCOMMIT)
            conn.cursor().execute("SELECT set_config('worklist.tenant', %s, false)", (tenant,))
            return conn
        except psycopg2.Error:
            time.sleep(0.1)
    return None


def call(cur, sql, args):
    start = time.time()
    cur.execute(sql, args)
    row = cur.fetchone()
    return start, time.time(), row


def worker(dsn, tenant, i):
    k = 0
    conn = None
    while not stopping.is_set():
        if conn is None:
            conn = connect(dsn, tenant)
            if conn is None:
                return
        k += 1
        task, actor = "w%d-t%d" % (i, k), "actor-%d" % i
        run, holder = "w%d-r%d" % (i, k), "holder-%d" % i
        try:
            cur = conn.cursor()
            call(cur, "SELECT id FROM worklist.open_task(%s, 'c', '{r}')", (task,))
            call(cur, "SELECT holder FROM worklist.claim(%s, %s, '{r}')", (task, actor))
            start, end, row = call(cur, "SELECT worklist.complete(%s, %s, %s)",
                                   (task, actor, json.dumps({"by": actor})))
            if row[0]:
                emit({"kind": "completion", "task": task, "actor": actor,
                      "start": start, "end": end})
            start, end, row = call(cur,
                                   "SELECT fence FROM worklist.claim_run('p', 's', %s, %s, '1 hour')",
                                   (run, holder))
            fence = row[0]
            emit({"kind": "claim", "run": run, "holder": holder, "fence": fence,
                  "start": start, "end": end})
            for checkpoint in ("c1", "c2"):
                start, end, _ = call(cur,
                                     "SELECT 1 FROM worklist.write_checkpoint('p', 's', %s, %s, %s, fence => %s)",
                                     (run, checkpoint, json.dumps({"step": checkpoint}), fence))
                emit({"kind": "checkpoint", "run": run, "checkpoint": checkpoint,
                      "fence": fence, "start": start, "end": end})
        except psycopg2.Error as e:
            emit({"kind": "error", "worker": i, "code": e.pgcode,
                  "message": str(e).strip(), "at": time.time()})
            try:
                conn.close()
            except psycopg2.Error:
                pass
            conn = None
            time.sleep(0.1)


def main():
    dsn, workers, tenant = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    threads = [threading.Thread(target=worker, args=(dsn, tenant, i), daemon=True)
               for i in range(1, workers + 1)]
    for t in threads:
        t.start()
    emit({"kind": "started", "at": time.time()})
    sys.stdin.read()
    stopping.set()
    for t in threads:
        t.join(30)
    emit({"kind": "stopped", "at": time.time()})


if __name__ == "__main__":
    main()
