"""The libvirt event adapter, driven from worker threads as libvirt drives it."""

from __future__ import annotations

import asyncio
import os
import threading

import libvirt

from aoe_tui.runtime.event_loop import ThreadSafeAsyncIOImpl

OPAQUE = (None, None, None)  # what virEventInvokeFreeCallback accepts without a real libvirt object


async def _until(predicate, seconds: float = 5.0) -> None:
    for _ in range(int(seconds / 0.01)):
        if predicate():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("condition not reached")


async def test_handles_and_timers_registered_from_worker_threads_fire_on_the_loop() -> None:
    impl = ThreadSafeAsyncIOImpl(asyncio.get_running_loop())
    read_end, write_end = os.pipe()
    fired: list[tuple[str, str]] = []
    try:

        def handle_cb(watch, fd, events, opaque):
            fired.append(("handle", threading.current_thread().name))
            os.read(fd, 1)

        def timer_cb(timer, opaque):
            fired.append(("timer", threading.current_thread().name))

        watch = await asyncio.to_thread(
            impl._add_handle, read_end, libvirt.VIR_EVENT_HANDLE_READABLE, handle_cb, OPAQUE
        )
        timer = await asyncio.to_thread(impl._add_timeout, 10, timer_cb, OPAQUE)
        os.write(write_end, b"x")
        await _until(lambda: {"handle", "timer"} <= {kind for kind, _ in fired})
        assert {name for _, name in fired} == {threading.current_thread().name}  # dispatched on the loop thread
        await asyncio.to_thread(impl._remove_timeout, timer)
        await asyncio.to_thread(impl._update_handle, watch, 0)
        await asyncio.sleep(0.05)
        count = len(fired)
        os.write(write_end, b"y")
        await asyncio.sleep(0.1)
        assert len(fired) == count, "neither a removed timer nor a disabled handle may fire"
        await asyncio.to_thread(impl._remove_handle, watch)
        await impl.drain()
        assert impl.is_idle()
    finally:
        os.close(read_end)
        os.close(write_end)


def test_a_handle_survives_the_move_to_a_new_loop() -> None:
    read_end, write_end = os.pipe()
    fired: list[int] = []
    first = asyncio.new_event_loop()
    impl = ThreadSafeAsyncIOImpl(first)
    try:
        impl._add_handle(
            read_end,
            libvirt.VIR_EVENT_HANDLE_READABLE,
            lambda watch, fd, events, opaque: fired.append(os.read(fd, 1)[0]),
            OPAQUE,
        )
        first.close()  # the registration was only queued; the old loop never ran it

        async def on_the_second_loop() -> None:
            impl.rebind(asyncio.get_running_loop())
            os.write(write_end, b"z")
            await _until(lambda: fired == [ord("z")])

        asyncio.run(on_the_second_loop())
    finally:
        os.close(read_end)
        os.close(write_end)
