"""Ctrl-C as a request to stop: long work polls a flag and ends cleanly, keeping what it found.

The first Ctrl-C sets the flag (mining returns its best proven card, SGD saves its
checkpoint); a second one raises KeyboardInterrupt at once.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager


class StopFlag:
    """Callable: True once a stop was requested."""

    def __init__(self):
        self._event = threading.Event()

    def __call__(self) -> bool:
        return self._event.is_set()

    def set(self) -> None:
        self._event.set()


@contextmanager
def stop_on_sigint(flag: StopFlag):
    """While active, SIGINT sets ``flag`` (a second SIGINT raises KeyboardInterrupt)."""
    if threading.current_thread() is not threading.main_thread():
        yield flag
        return

    def handler(signum, frame):
        if flag():
            raise KeyboardInterrupt
        flag.set()

    old = signal.signal(signal.SIGINT, handler)
    try:
        yield flag
    finally:
        signal.signal(signal.SIGINT, old)
