"""Bad dask executor settings are one-line errors naming the setting, before any call."""

from __future__ import annotations

import pytest
from evalkit_dask.executor import DaskExecutor


def test_an_address_distributed_cannot_parse_names_the_address_and_the_form() -> None:
    executor = DaskExecutor("notanaddress")
    with pytest.raises(ValueError) as info:
        executor._connect(4)
    assert str(info.value) == (
        "dask executor: the scheduler address 'notanaddress' is not one (missing port "
        "number in address 'notanaddress'); write tcp://host:8786")


@pytest.mark.parametrize("value", ["abc", 0, -1, float("nan"), True])
def test_death_timeout_must_be_a_positive_number(value: object) -> None:
    with pytest.raises(ValueError, match=r"^dask executor: death_timeout_s must be a "
                       r"positive number of seconds, got "):
        DaskExecutor(death_timeout_s=value)  # type: ignore[arg-type]
