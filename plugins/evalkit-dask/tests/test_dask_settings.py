"""Bad dask executor settings are one-line errors naming the setting, before any call."""

from __future__ import annotations

import socket

import pytest
from evalkit_dask.executor import DaskExecutor


def test_an_address_distributed_cannot_parse_names_the_address_and_the_form() -> None:
    executor = DaskExecutor("notanaddress")
    with pytest.raises(ValueError) as info:
        executor._connect(4)
    assert str(info.value) == (
        "dask executor: the scheduler address 'notanaddress' is not one (missing port "
        "number in address 'notanaddress'); write tcp://host:8786")


@pytest.mark.parametrize("name", ["death_timeout_s", "connect_timeout_s"])
@pytest.mark.parametrize("value", ["abc", 0, -1, float("nan"), float("inf"), True])
def test_the_timeouts_must_be_positive_numbers(name: str, value: object) -> None:
    with pytest.raises(ValueError, match=rf"^dask executor: {name} must be a "
                       r"positive number of seconds, got "):
        DaskExecutor(**{name: value})  # type: ignore[arg-type]


def test_a_scheduler_that_never_answers_is_given_up_after_connect_timeout_s() -> None:
    # a real listening socket on 127.0.0.1 that accepts and never says a word
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        executor = DaskExecutor(f"tcp://127.0.0.1:{port}", connect_timeout_s=1.5)
        with pytest.raises(OSError) as info:
            executor._connect(4)
    assert str(info.value).startswith(
        f"dask executor: no scheduler answers at tcp://127.0.0.1:{port} within "
        "connect_timeout_s 1.5 s (")


def test_the_handshake_check_works_inside_a_running_event_loop() -> None:
    # evaluate() called from a notebook runs inside an event loop: the check must not
    # call asyncio.run on that thread
    import asyncio

    async def inside() -> None:
        with socket.socket() as silent:
            silent.bind(("127.0.0.1", 0))
            silent.listen()
            port = silent.getsockname()[1]
            with pytest.raises(OSError, match=r"within connect_timeout_s 0\.5 s"):
                DaskExecutor(f"tcp://127.0.0.1:{port}", connect_timeout_s=0.5)._connect(4)

    asyncio.run(inside())
