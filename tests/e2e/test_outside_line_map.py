"""An edit with anchors taken before a big outside change lands where its line went,
and the line map that carries it is a job: others are answered meanwhile (issue 40).

An agent reads a window of a file with anchors; a writer outside the daemon inserts
a block at the top and changes lines all over the file; the agent's edit with its
old anchor is carried through that change by a line map of the two contents
(daemon/text/rebase.py `line_map`). A map that costs more than a slice is computed
by a job (daemon/text/alignment.py, a step at a time): the request is parked, and
another client pinging all along is answered. A real daemon, a 3,500-line file
whose repeated blank and closing lines make its map cost a few hundred ms (the
issue's 200,000 lines are measured by `make bench`, bench/outside.py).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from editjournal.client import Client
from tests.conftest import RunningDaemon

LINES = 3_500
TOP = 50  # lines the outside writer inserts at the top
EVERY = 100  # and one line of each this many it changes
LONGEST_WAIT_S = 10.0  # a stall guard: a busy machine stretches every slice


def _content() -> list[str]:
    """Code-like lines: most unique, a blank or a closing line now and then."""
    return [
        "" if i % 8 == 7 else "    }" if i % 13 == 12 else f"    v{i} = f({i % 97}, {i})"
        for i in range(LINES)
    ]


def _changed(lines: list[str]) -> list[str]:
    body = [f"{line} # outside" if i % EVERY == 1 else line for i, line in enumerate(lines)]
    return [f"# header {k}" for k in range(TOP)] + body


def _while_pinged(other: Client, request: Callable[[], Any]) -> tuple[Any, float, bool]:
    """`request` in a thread; `other` asks for `status` until it answers: its result,
    the longest status round trip and whether the daemon said a request was parked."""
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["result"] = request()
        except Exception as e:  # re-raised below, in the test's thread
            out["error"] = e

    thread = threading.Thread(target=run)
    thread.start()
    longest, parked, deadline = 0.0, False, time.monotonic() + 120
    while thread.is_alive():
        assert time.monotonic() < deadline, "the edit never answered"
        began = time.monotonic()
        parked = other.status().parked > 0 or parked
        longest = max(longest, time.monotonic() - began)
        thread.join(0.005)
    thread.join()
    if "error" in out:
        raise out["error"]
    return out["result"], longest, parked


def test_an_edit_with_old_anchors_lands_where_its_line_went_while_others_are_served(
    daemon: RunningDaemon,
) -> None:
    lines = _content()
    path = daemon.root / "big.py"
    path.write_text("".join(f"{line}\n" for line in lines))
    agent, other = daemon.client("agent", timeout=120), daemon.client("other")
    target = 2_621  # 1-based: "    v2620 = ...", a line the outside writer leaves alone
    assert lines[target - 1].startswith("    v") and (target - 1) % EVERY != 1
    read = agent.read_file("big.py", hashes=True, range=f"{target - 20}-{target + 20}")
    anchor = next(row.hash for row in read.lines or [] if row.line == target)

    changed = _changed(lines)
    path.write_text("".join(f"{line}\n" for line in changed))
    edit = {"op": "replace_line", "hash": anchor, "content": "    edited = 1"}
    _, longest, parked = _while_pinged(other, lambda: agent.edit("big.py", [edit]))

    assert parked, "the line map was computed at once, not in a job"
    assert longest <= LONGEST_WAIT_S
    changed[TOP + target - 1] = "    edited = 1"
    assert path.read_text() == "".join(f"{line}\n" for line in changed)
    again = agent.read_file("big.py", hashes=True, range=f"{TOP + target}-{TOP + target}")
    assert [row.text for row in again.lines or []] == ["    edited = 1"]
