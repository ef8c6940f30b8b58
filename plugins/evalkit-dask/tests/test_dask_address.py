"""The scheduler address and the sizes of the dask executor, refused at once when they
cannot work: a port out of range before any connection, a port that refuses after
``REFUSED_RETRY_S`` (not the whole ``connect_timeout_s``), sizes above their documented
maxima, ``judge_on_workers`` that is not a boolean. Real sockets on 127.0.0.1."""

from __future__ import annotations

import socket
import threading
import time

import pytest
from evalkit_dask.address import REFUSED_RETRY_S, RefusedError, check_address, refused_fast
from evalkit_dask.executor import (
    MAX_BATCH_SIZE,
    MAX_N_WORKERS,
    MAX_THREADS_PER_WORKER,
    DaskExecutor,
)

from evalkit.io.limits import MAX_WAIT_S
from evalkit.testing import returns_within

#: a guard against a hang: far beyond the retry, far below the hour-long connect timeout
#: the tests allow, so a call that ends in time gave up by the retry, whatever the load
HANG_S = 120.0


def refusal_of(executor: DaskExecutor) -> tuple[float, BaseException]:
    """``(seconds, the error)`` of ``executor._connect(4)``, waited for at most
    :data:`HANG_S`."""
    took, error = returns_within(lambda: executor._connect(4), HANG_S)
    assert isinstance(error, RefusedError), error
    return took, error


def closed_port() -> int:
    """A port of 127.0.0.1 nothing listens on (bound, then closed: connecting is
    refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize(("address", "problem"), [
    ("tcp://127.0.0.1:99999", "Port out of range 0-65535"),
    ("tcp://127.0.0.1:-1", "Port could not be cast to integer value as '-1'"),
    ("tcp://127.0.0.1:http", "Port could not be cast to integer value as 'http'"),
    ("127.0.0.1:70000", "Port out of range 0-65535"),
    ("tls://:8786", "no host"),
    ("tcp://127.0.0.1:0", "port 0 is not one a scheduler listens on"),
])
def test_a_malformed_address_is_refused_before_any_connection(address: str,
                                                              problem: str) -> None:
    with pytest.raises(ValueError) as info:
        DaskExecutor(address)
    assert str(info.value) == (f"dask executor: the scheduler address {address!r} is not "
                               f"one ({problem}); write tcp://host:8786")


def test_addresses_of_other_forms_are_left_to_distributed() -> None:
    for address in ("tcp://127.0.0.1:8786", "tcp://[::1]:8786", "127.0.0.1:8786",
                    "inproc://10.0.0.1/123/1", "tcp://scheduler"):
        assert check_address(address) == address


def test_a_refused_port_is_given_up_after_the_retry_not_the_connect_timeout() -> None:
    port = closed_port()
    executor = DaskExecutor(f"tcp://127.0.0.1:{port}", connect_timeout_s=MAX_WAIT_S)
    took, error = refusal_of(executor)
    assert str(error) == (
        f"dask executor: the scheduler address tcp://127.0.0.1:{port} refused the "
        f"connection (nothing listens on port {port} of 127.0.0.1; tried for "
        f"{REFUSED_RETRY_S:g} s); start the scheduler (dask scheduler) or fix the address")
    # it tried for REFUSED_RETRY_S, and gave up long before the hour it was allowed
    assert took >= REFUSED_RETRY_S - 0.5


@pytest.mark.parametrize("host", ["nohost.invalid", "256.1.1.1"])
def test_a_host_that_does_not_resolve_is_refused_at_once(host: str) -> None:
    # .invalid never resolves (RFC 2606), and 256 is no IPv4 octet: no DNS answer can help
    # allowed an hour to connect, it ends (within the guard) without waiting for it
    executor = DaskExecutor(f"tcp://{host}:8786", connect_timeout_s=MAX_WAIT_S)
    _, error = refusal_of(executor)
    assert str(error).startswith(f"dask executor: the scheduler host '{host}' of "
                                 f"tcp://{host}:8786 does not resolve (")


def test_a_scheduler_that_starts_within_the_retry_is_waited_for() -> None:
    port = closed_port()
    listening = threading.Event()

    def start_late() -> None:
        time.sleep(REFUSED_RETRY_S / 3)
        with socket.socket() as server:
            server.bind(("127.0.0.1", port))
            server.listen()
            listening.set()
            conn, _ = server.accept()
            conn.close()

    thread = threading.Thread(target=start_late, daemon=True)
    thread.start()
    refused_fast(f"tcp://127.0.0.1:{port}", 30.0)  # returns once accepted
    assert listening.is_set()
    thread.join(5)


def test_a_short_connect_timeout_bounds_the_retry_too() -> None:
    port = closed_port()
    with pytest.raises(RefusedError, match=r"tried for 0\.5 s"):
        refused_fast(f"tcp://127.0.0.1:{port}", 0.5)


@pytest.mark.parametrize(("name", "most"), [("n_workers", MAX_N_WORKERS),
                                            ("threads_per_worker", MAX_THREADS_PER_WORKER),
                                            ("batch_size", MAX_BATCH_SIZE)])
def test_sizes_have_documented_maxima(name: str, most: int) -> None:
    DaskExecutor(**{name: most})  # type: ignore[arg-type]
    for bad in (most + 1, 100_000, 0, -1, 2.0, True, "4"):
        with pytest.raises(ValueError) as info:
            DaskExecutor(**{name: bad})  # type: ignore[arg-type]
        assert str(info.value) == (f"dask executor: {name} must be an integer from 1 to "
                                   f"{most}, got {bad!r}")


def test_the_timeouts_take_the_runners_one_hour_bound() -> None:
    executor = DaskExecutor(connect_timeout_s=MAX_WAIT_S, death_timeout_s=MAX_WAIT_S)
    assert executor.connect_timeout_s == executor.death_timeout_s == 3600.0


@pytest.mark.parametrize("value", ["false", "no", "0", 0, 1, None, "true"])
def test_judge_on_workers_must_be_a_boolean(value: object) -> None:
    # bool("false") is True: a string or a number would have meant judging on workers
    with pytest.raises(ValueError) as info:
        DaskExecutor(judge_on_workers=value)  # type: ignore[arg-type]
    assert str(info.value) == ("dask executor: judge_on_workers must be true or false, "
                               f"got {value!r}")
    assert DaskExecutor(judge_on_workers=False).judge_on_workers is False
    assert DaskExecutor(judge_on_workers=True).judge_on_workers is True
