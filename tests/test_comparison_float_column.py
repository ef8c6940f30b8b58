"""``MetricComparison.differences`` from :func:`evalkit.compare` is a
:class:`~evalkit.comparison.records.FloatColumn`: one float64 array that behaves as the
tuple of its values."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from evalkit.comparison.records import FloatColumn


def test_a_column_behaves_as_the_tuple_of_its_values() -> None:
    values = (0.25, -0.5, 0.1, 0.0)
    col = FloatColumn(np.array(values))
    assert len(col) == 4 and col[1] == -0.5 and type(col[1]) is float
    assert col[-1] == 0.0 and col[1:3] == (-0.5, 0.1) and type(col[1:3]) is tuple
    assert tuple(col) == values and list(col) == list(values) and 0.1 in col
    assert col == values and values == col and col == FloatColumn(list(values))
    assert col != (0.25, -0.5) and col != list(values)  # as a tuple: not equal to a list
    assert hash(col) == hash(values) and repr(col) == repr(values)
    assert sorted(col) == sorted(values) and sum(col) == sum(values)
    assert pickle.loads(pickle.dumps(col)) == col and copy.deepcopy(col) == col
    with pytest.raises(IndexError):
        col[4]


def test_a_column_reads_its_array_without_a_copy_and_cannot_change_it() -> None:
    matrix = np.arange(12.0).reshape(4, 3)
    col = FloatColumn(matrix[:, 1])  # a column of a family's matrix: a view
    assert tuple(col) == (1.0, 4.0, 7.0, 10.0)
    arr = np.asarray(col)
    assert np.shares_memory(arr, matrix) and not arr.flags.writeable
    with pytest.raises(ValueError):
        arr[0] = 5.0
    assert matrix.flags.writeable  # the matrix itself is left as it was
    with pytest.raises(ValueError, match="one-dimensional"):
        FloatColumn(matrix)


def test_compare_gives_the_differences_as_a_column() -> None:
    from evalkit import RunResult, compare
    from evalkit.data.results import QueryResult

    rng = np.random.default_rng(1)
    a, b = rng.random(30), rng.random(30)
    runs = [RunResult(name, [QueryResult(f"q{i:02d}", [], {"ap": float(v[i])})
                             for i in range(30)]) for name, v in (("a", a), ("b", b))]
    row = compare(runs[0], runs[1], metrics=["ap"], n_resamples=200).results[0]
    assert isinstance(row.differences, FloatColumn)
    assert row.differences == tuple((b - a).tolist())
    assert row.per_query() == dict(zip(row.query_ids, (b - a).tolist(), strict=True))
