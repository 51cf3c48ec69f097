"""A `match: regex` anchor (daemon.text.hunks) is matched within a time limit.

The agent's pattern runs on the daemon's one thread, so a catastrophic one
(nested repeats on a long line) must be refused `regex_timeout`, not run for
minutes; the limit is a parameter and the clock is the caller's.
"""

from __future__ import annotations

import pytest

from editjournal.daemon.text.hunks import RegexLimit, anchor_lines, insert_found
from editjournal.daemon.text.lines import parse
from editjournal.schemas.errors import ErrorCode, ToolError

CATASTROPHIC = r"(a|aa)+$"  # exponential backtracking on a run of "a" ending in "b"
STALLING_LINE = "a" * 60 + "b"


def refusal(call) -> ToolError:
    with pytest.raises(ToolError) as caught:
        call()
    return caught.value


def test_a_catastrophic_pattern_is_refused_regex_timeout():
    doc = parse(f"ok\n{STALLING_LINE}\n")
    error = refusal(lambda: insert_found(doc, CATASTROPHIC, "regex", None, "x\n", True))
    assert error.code is ErrorCode.REGEX_TIMEOUT
    assert error.details == {"field": "anchor", "limit_s": 0.25, "line": 2, "line_count": 2}
    assert "took longer than its 0.25 s limit" in error.message
    assert 'match: "contains"' in error.message


def test_the_limit_is_for_the_whole_request_by_the_callers_clock():
    now = [0.0]

    def clock() -> float:
        now[0] += 0.1  # each reading: a tenth of a second later
        return now[0]

    limit = RegexLimit.starting(clock, seconds=0.35)  # deadline 0.45; line n is read at 0.1+0.1n
    lines = ["x"] * 10
    error = refusal(lambda: anchor_lines(lines, "x", "regex", limit))
    assert error.code is ErrorCode.REGEX_TIMEOUT
    assert error.details["line"] == 4  # lines 1-3 searched, nothing left for line 4


def test_a_spent_budget_searches_nothing():
    spent = RegexLimit(0.25, lambda: 0.0)
    assert refusal(lambda: anchor_lines(["x"], "x", "regex", spent)).details["line"] == 1
    assert anchor_lines([], "x", "regex", spent) == []


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (r"^def (?P<name>\w+)\(", [1, 3]),
        (r"(?i)RETURN \d$", [2, 4]),
        (r"(?<=def )g", [3]),
        (r"return (1|2)\b", [2, 4]),
    ],
)
def test_python_re_syntax_still_matches(pattern: str, expected: list[int]):
    lines = ["def f():", "    return 1", "def g():", "    return 2"]
    assert anchor_lines(lines, pattern, "regex") == expected


@pytest.mark.parametrize("pattern", ["(", "a{99999999999999999999}", "[z-a]", "a**", "\\"])
def test_a_pattern_that_does_not_compile_is_invalid_params(pattern: str):
    error = refusal(lambda: anchor_lines(["a"], pattern, "regex"))
    assert error.code is ErrorCode.INVALID_PARAMS
    assert "not a valid regular expression" in error.message and "$.params.anchor" in error.message
