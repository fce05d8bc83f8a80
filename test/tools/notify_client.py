#!/usr/bin/python3
"""Clients for the notification tests (test/t/7*_notify*.pl).

  listen DSN SECONDS CHANNEL...
      LISTEN on each channel, print READY, then one JSON line per
      notification received ({"at": epoch seconds, "channel", "payload"})
      until SECONDS have passed or standard input is closed.

  load DSN SECONDS WRITERS
      Latency under load.  WRITERS connections run claim_next + complete
      cycles in tenant "load" (which must have tasks enough and a channel);
      one more connection opens a task in tenant "probe" every 50 ms and
      notes when its commit returned; a listener on the probe tenant's
      channel notes when each payload arrives.  Prints one JSON object:
      the delays from commit to arrival (median, p99, max, in ms), how
      many probes were sent and notified, how many cycles the writers ran,
      and how many payloads the load tenant's own listener received.

  burst DSN WRITERS OPS
      Coalescing: WRITERS connections each open OPS tasks and claim, then
      complete, every one of them in tenant "burst", one transaction per
      call, all at once; a listener on the tenant's channel sums what the
      payloads count.  Prints the sums and the number of payloads once the
      sums reach what was committed or 10 s have passed.

  rotations DSN ROUNDS
      Rotation against the sender: 3 writers open tasks in tenant "rot"
      without pause while one connection, ROUNDS times, listens on the
      tenant's channel and rotates it.  Prints the number of rotations
      heard and of payloads that arrived on a channel after its
      {"rotated": true} (there must be none).

Each connection sets worklist.tenant itself; the DSN names the database.
"""
import json
import select
import sys
import threading
import time

import psycopg2
import psycopg2.extensions


def connect(dsn, tenant=None):
    conn = psycopg2.connect(dsn)
    conn.set_isolation_level(psycopg2.extensions.ISOLATION_LEVEL_AUTOCOMMIT)
    if tenant is not None:
        conn.cursor().execute("SELECT set_config('worklist.tenant', %s, false)", (tenant,))
    return conn


def channel_of(dsn, tenant):
    conn = connect(dsn, tenant)
    cur = conn.cursor()
    cur.execute("SELECT worklist.channel()")
    name = cur.fetchone()[0]
    conn.close()
    return name


class Listener(threading.Thread):
    """Collects (arrival time, channel, payload) until stopped."""

    def __init__(self, dsn, channels):
        super().__init__(daemon=True)
        self.conn = connect(dsn)
        cur = self.conn.cursor()
        for ch in channels:
            cur.execute('LISTEN "%s"' % ch.replace('"', '""'))
        self.received = []
        self.lock = threading.Lock()
        self.stopping = False

    def run(self):
        while not self.stopping:
            if select.select([self.conn], [], [], 0.05)[0]:
                self.conn.poll()
                now = time.time()
                with self.lock:
                    while self.conn.notifies:
                        n = self.conn.notifies.pop(0)
                        self.received.append((now, n.channel, n.payload))

    def stop(self):
        self.stopping = True
        self.join()
        self.conn.close()

    def snapshot(self):
        with self.lock:
            return list(self.received)


def cmd_listen(dsn, seconds, channels):
    conn = connect(dsn)
    cur = conn.cursor()
    for ch in channels:
        cur.execute('LISTEN "%s"' % ch.replace('"', '""'))
    print("READY", flush=True)
    end = time.time() + float(seconds)
    while time.time() < end:
        readable = select.select([conn, sys.stdin], [], [], 0.05)[0]
        if sys.stdin in readable and not sys.stdin.readline():
            break
        if conn in readable:
            conn.poll()
            while conn.notifies:
                n = conn.notifies.pop(0)
                print(json.dumps({"at": time.time(), "channel": n.channel,
                                  "payload": n.payload}), flush=True)
    print("DONE", flush=True)


def percentile(values, p):
    values = sorted(values)
    if not values:
        return None
    k = min(len(values) - 1, max(0, int(round(p / 100.0 * len(values) + 0.5)) - 1))
    return values[k]


def cmd_load(dsn, seconds, writers):
    seconds = float(seconds)
    writers = int(writers)
    probe_listener = Listener(dsn, [channel_of(dsn, "probe")])
    load_listener = Listener(dsn, [channel_of(dsn, "load")])
    probe_listener.start()
    load_listener.start()
    stop = threading.Event()
    cycles = [0] * writers
    errors = []

    def writer(i):
        try:
            conn = connect(dsn, "load")
            cur = conn.cursor()
            while not stop.is_set():
                cur.execute("SELECT id FROM worklist.claim_next(%s, '{r}')", ("w%d" % i,))
                row = cur.fetchone()
                if row is None or row[0] is None:
                    break
                cur.execute("SELECT worklist.complete(%s, %s, '{}')", (row[0], "w%d" % i))
                cycles[i] += 1
            conn.close()
        except Exception as e:  # reported, and fails the test
            errors.append(repr(e))

    threads = [threading.Thread(target=writer, args=(i,), daemon=True) for i in range(writers)]
    for t in threads:
        t.start()

    probe = connect(dsn, "probe")
    cur = probe.cursor()
    commits = []
    end = time.time() + seconds
    n = 0
    while time.time() < end:
        n += 1
        cur.execute("SELECT worklist.open_task(%s, 'c', '{r}')", ("p%d" % n,))
        commits.append(time.time())
        time.sleep(0.05)
    stop.set()
    for t in threads:
        t.join()
    time.sleep(0.5)
    probe_listener.stop()
    load_listener.stop()

    # the i-th task opened is counted by the payload whose running sum of
    # "opened" first reaches i
    delays = []
    i = 0
    for at, _, payload in probe_listener.snapshot():
        opened = json.loads(payload).get("task", {}).get("opened", 0)
        for _ in range(opened):
            if i < len(commits):
                delays.append((at - commits[i]) * 1000.0)
            i += 1
    print(json.dumps({
        "probes": len(commits),
        "probes_notified": i,
        "median_ms": percentile(delays, 50),
        "p99_ms": percentile(delays, 99),
        "max_ms": max(delays) if delays else None,
        "cycles": sum(cycles),
        "load_payloads": len(load_listener.snapshot()),
        "errors": errors,
    }), flush=True)


def cmd_burst(dsn, writers, ops):
    writers = int(writers)
    ops = int(ops)
    listener = Listener(dsn, [channel_of(dsn, "burst")])
    listener.start()
    barrier = threading.Barrier(writers)
    errors = []

    def writer(i):
        try:
            conn = connect(dsn, "burst")
            cur = conn.cursor()
            barrier.wait()
            for k in range(ops):
                cur.execute("SELECT worklist.open_task(%s, 'c', '{r}')", ("b%d_%d" % (i, k),))
            for k in range(ops):
                cur.execute("SELECT worklist.claim(%s, %s, '{r}')", ("b%d_%d" % (i, k), "w%d" % i))
            for k in range(ops):
                cur.execute("SELECT worklist.complete(%s, %s, '{}')", ("b%d_%d" % (i, k), "w%d" % i))
            conn.close()
        except Exception as e:
            errors.append(repr(e))

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    expected = writers * ops
    end = time.time() + 10
    sums = {}
    while time.time() < end:
        sums = {}
        got = listener.snapshot()
        for _, _, payload in got:
            for kind, events in json.loads(payload).items():
                for event, count in events.items():
                    key = kind + "." + event
                    sums[key] = sums.get(key, 0) + count
        if all(sums.get(k, 0) >= expected for k in ("task.opened", "task.claimed", "task.completed")):
            break
        time.sleep(0.05)
    time.sleep(0.3)  # anything more would be a count too many
    got = listener.snapshot()
    listener.stop()
    sums = {}
    for _, _, payload in got:
        for kind, events in json.loads(payload).items():
            for event, count in events.items():
                key = kind + "." + event
                sums[key] = sums.get(key, 0) + count
    print(json.dumps({"sums": sums, "payloads": len(got), "errors": errors}), flush=True)


def cmd_rotations(dsn, rounds):
    rounds = int(rounds)
    stop = threading.Event()
    errors = []

    def writer(i):
        try:
            conn = connect(dsn, "rot")
            cur = conn.cursor()
            k = 0
            while not stop.is_set():
                k += 1
                cur.execute("SELECT worklist.open_task(%s, 'c', '{r}')", ("r%d_%d" % (i, k),))
            conn.close()
        except Exception as e:
            errors.append(repr(e))

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    listen = connect(dsn)
    admin = connect(dsn, "rot")
    cur = admin.cursor()
    got = []

    def drain(seconds):
        end = time.time() + seconds
        while time.time() < end:
            if select.select([listen], [], [], max(end - time.time(), 0))[0]:
                listen.poll()
                while listen.notifies:
                    n = listen.notifies.pop(0)
                    got.append((n.channel, n.payload))

    for _ in range(rounds):
        cur.execute("SELECT worklist.channel()")
        listen.cursor().execute('LISTEN "%s"' % cur.fetchone()[0])
        drain(0.03)
        cur.execute("SELECT worklist.rotate_channel()")
    stop.set()
    for t in threads:
        t.join()
    drain(2)
    rotated = set()
    leaks = []
    for channel, payload in got:
        if payload == '{"rotated": true}':
            rotated.add(channel)
        elif channel in rotated:
            leaks.append(payload)
    print(json.dumps({"rotations": len(rotated), "leaks": len(leaks),
                      "payloads": len(got), "errors": errors}), flush=True)


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "listen":
        cmd_listen(args[0], args[1], args[2:])
    elif cmd == "load":
        cmd_load(*args)
    elif cmd == "burst":
        cmd_burst(*args)
    elif cmd == "rotations":
        cmd_rotations(*args)
    else:
        sys.exit("unknown command " + cmd)
