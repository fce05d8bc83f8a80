"""Waiting: backoff after failures, and a stop request that ends waits."""
from __future__ import annotations

import os
import random
import select
import signal
import threading
from typing import Any, Callable, Iterator, Optional
import contextlib


def backoff(failures: int) -> float:
    """Seconds to wait after this many failures in a row: 0.25, 0.5, 1, ...
    up to 10, each with up to half of it shaved off at random so that many
    clients do not come back in step."""
    seconds = min(10.0, 0.25 * 2 ** min(max(failures, 1) - 1, 10))
    return float(seconds * (0.5 + random.random() / 2))


class Stopper:
    """A stop request, and waits that it ends at once (a pipe that select()
    watches beside a connection).  stop() may be called from a signal
    handler or another thread."""

    def __init__(self) -> None:
        self.requested = False
        self._read, self._write = os.pipe()
        os.set_blocking(self._read, False)
        os.set_blocking(self._write, False)
        self._lock = threading.Lock()

    def stop(self) -> None:
        self.requested = True
        try:
            os.write(self._write, b'x')
        except (BlockingIOError, OSError):
            pass

    def wait(self, seconds: float, conn: Any = None) -> bool:
        """Waits up to seconds, less on a stop request or when conn (if
        given) has something to read.  True when conn has."""
        readers = [self._read] + ([conn] if conn is not None else [])
        ready, _, _ = select.select(readers, [], [], max(seconds, 0))
        return conn is not None and conn in ready

    def sleep(self, seconds: float) -> bool:
        """Sleeps up to seconds; True when a stop request ended it."""
        if not self.requested:
            self.wait(seconds)
        return self.requested

    def close(self) -> None:
        os.close(self._read)
        os.close(self._write)

    @contextlib.contextmanager
    def on_signals(self, enabled: bool = True) -> Iterator[None]:
        """SIGTERM and SIGINT request the stop while the block runs (in the
        main thread only; elsewhere nothing is installed)."""
        if not enabled or threading.current_thread() is not threading.main_thread():
            yield
            return
        handler: Callable[[int, Optional[Any]], None] = lambda signum, frame: self.stop()
        saved = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGINT)}
        try:
            yield
        finally:
            for s, old in saved.items():
                signal.signal(s, old)
