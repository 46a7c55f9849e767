"""Run a coroutine as a kernel runs a cell's tasks: on an asyncio event loop of its own."""

from __future__ import annotations

import asyncio
import threading


def in_event_loop(coroutine_function):
    """Run coroutine_function() in a new event loop in a thread of its own, as a kernel's loop
    runs; its result, or what it raised. (The browser tests keep Playwright's event loop
    running in the main thread for the whole session, and asyncio.run refuses to start beside
    it.)"""
    return without_event_loop(asyncio.run, coroutine_function())


def without_event_loop(function, *args):
    """function(*args) in a thread of its own, where no event loop runs (as in a plain script);
    its result, or what it raised. In the test session the browser tests' Playwright keeps an
    event loop running in the main thread, where an explorer would find it and play on it."""
    done: list = []
    failed: list[BaseException] = []

    def run():
        try:
            done.append(function(*args))
        except BaseException as error:  # noqa: BLE001 - handed back to the test's own thread
            failed.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if failed:
        raise failed[0]
    return done[0]
