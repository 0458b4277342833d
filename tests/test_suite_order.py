"""The suite starts its longest tests first on every xdist worker (tests/conftest.py), and the
list it reads names tests that exist."""

from __future__ import annotations

import re

from tests.conftest import LONGEST, REPO, longest_first


def test_every_listed_long_test_is_a_test_function_of_its_file():
    for nodeid in LONGEST:
        path, name = nodeid.split("::")
        source = (REPO / path).read_text(encoding="utf-8")
        assert re.search(rf"^def {re.escape(name.split('[')[0])}\(", source, re.MULTILINE), nodeid


def test_each_worker_starts_with_the_long_tests_and_no_test_is_lost_or_doubled():
    ids = [f"t{i}" for i in range(31)]
    seconds = {"t5": 100.0, "t30": 90.0, "t17": 50.0, "t2": 45.0, "t9": 1.0}
    order = longest_first(ids, seconds, workers=3)
    assert sorted(order) == list(range(31))
    # xdist's worksteal runs: items 0-9, 10-19 and 20-30 of the order, each from its start.
    runs = [[ids[i] for i in order[a:b]] for a, b in ((0, 10), (10, 20), (20, 31))]
    assert [run[0] for run in runs] == ["t5", "t30", "t17"]
    assert runs[2][:2] == ["t17", "t2"]  # 50 + 45, then t9 where the least is: 90
    assert runs[1][:2] == ["t30", "t9"] and runs[0][1] == "t0"
    others = [name for run in runs for name in run if name not in seconds]
    assert others == [name for name in ids if name not in seconds]  # their order is kept


def test_a_selection_smaller_than_its_long_tests_keeps_every_test():
    seconds = {"a": 3.0, "b": 2.0, "c": 1.0}
    order = longest_first(["c", "x", "a", "b"], seconds, workers=3)
    assert sorted(order) == [0, 1, 2, 3] and order[0] == 2
