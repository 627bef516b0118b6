"""libvirt's event loop, driven by the running asyncio loop.

libvirtaio dispatches libvirt's handles and timers on an asyncio loop, but it
mutates that loop directly from whatever thread libvirt happens to call it
from, and we make every blocking libvirt call in a worker thread (each remote
RPC toggles the socket's handle from the calling thread). asyncio loops are not
thread-safe, so this subclass posts every registration change to the loop in
order, allocating ids synchronously as libvirt requires.
"""

from __future__ import annotations

import asyncio
import collections
from typing import Any
from collections.abc import Callable

import libvirtaio


class ThreadSafeAsyncIOImpl(libvirtaio.virEventAsyncIOImpl):
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(loop=loop)
        self._operations: collections.deque = collections.deque()

    def _post(self, operation: Callable[..., Any], *args: Any) -> None:
        # Always queued (also from the loop thread) so operations on one
        # handle run in the order libvirt issued them.
        self._operations.append((operation, args))
        try:
            self.loop.call_soon_threadsafe(self._run_posted)
        except RuntimeError:
            pass  # that loop is closed; rebind() runs the queue on the next one

    def _run_posted(self) -> None:
        while self._operations:
            operation, args = self._operations.popleft()
            operation(*args)

    def _add_handle(self, fd: int, event: int, cb: Any, opaque: Any) -> int:
        callback = libvirtaio.FDCallback(self, cb, opaque, descriptor=None, event=event)
        self._post(self._attach_handle, fd, callback)
        iden: int = callback.iden  # libvirtaio has no types: its callbacks' ids are ints
        return iden

    def _attach_handle(self, fd: int, callback: libvirtaio.FDCallback) -> None:
        callback.descriptor = self.descriptors[fd]
        self.callbacks[callback.iden] = callback
        callback.descriptor.add_handle(callback)
        self._pending_inc()

    def _update_handle(self, watch: int, event: int) -> None:
        self._post(super()._update_handle, watch, event)

    def _remove_handle(self, watch: int) -> int:
        self._post(super()._remove_handle, watch)
        return 0

    def _add_timeout(self, timeout: int, cb: Any, opaque: Any) -> int:
        callback = libvirtaio.TimeoutCallback(self, cb, opaque)
        self._post(self._attach_timeout, callback, timeout)
        iden: int = callback.iden
        return iden

    def _attach_timeout(self, callback: libvirtaio.TimeoutCallback, timeout: int) -> None:
        self.callbacks[callback.iden] = callback
        callback.update(timeout=timeout)
        self._pending_inc()

    def _update_timeout(self, timer: int, timeout: int) -> None:
        self._post(super()._update_timeout, timer, timeout)

    def _remove_timeout(self, timer: int) -> int:
        self._post(super()._remove_timeout, timer)
        return 0

    def rebind(self, loop: asyncio.AbstractEventLoop) -> None:
        """Carry on on another loop (repeated asyncio.run() in one process, test loops).

        libvirt accepts an event implementation only once per process, so the
        registered one moves, re-arming whatever handles and timers are still open.
        """
        self.loop = loop
        self._finished = None
        self._run_posted()
        for descriptor in self.descriptors.values():
            descriptor.update()
        for callback in self.callbacks.values():
            if isinstance(callback, libvirtaio.TimeoutCallback) and callback._task is not None:
                callback._task = None
                callback.update(timeout=callback.timeout)


_registered: ThreadSafeAsyncIOImpl | None = None


def ensure_libvirt_event_loop() -> ThreadSafeAsyncIOImpl:
    """Drive libvirt's events from the running loop.

    Must run before a connection is opened, or that connection gets no
    events or keepalives.
    """
    global _registered
    loop = asyncio.get_running_loop()
    if _registered is None:
        _registered = ThreadSafeAsyncIOImpl(loop=loop).register()
    elif _registered.loop is not loop:
        _registered.rebind(loop)
    return _registered
