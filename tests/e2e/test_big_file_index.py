"""A big file's anchors are built as a job, and come out as if built at once (issue 40).

A file of `SLICED_FROM` lines or more that nobody anchored yet is anchored a slice
at a time (daemon/handlers/indexjob.py): the request is parked and handled again
once the index is built, and a write of many hunks derives the next version's
anchors in a job too. A real daemon, a file just over the line count: the read's
anchors and marks, and a 20-hunk patch's diff and changed lines, against the index
computed at once in the test; another client is answered meanwhile. (The issue's
sizes, 200,000 lines and 1,000 hunks, are measured by `make bench`, bench/bigfile.py.)
"""

from __future__ import annotations

from editjournal.daemon.handlers.indexjob import SLICED_FROM
from editjournal.daemon.text.anchors import AnchorIndex
from tests.conftest import RunningDaemon
from tests.patch_support import sha

LINES = SLICED_FROM + 500
HUNKS = 20  # over MANY_REGIONS: the new version is derived in the job as well


def test_a_big_file_is_anchored_in_a_job_as_if_at_once(daemon: RunningDaemon) -> None:
    lines = [f"value_{i} = {i % 977}" if i % 9 else "" for i in range(LINES)]
    (daemon.root / "big.py").write_text("".join(f"{line}\n" for line in lines))
    agent, other = daemon.client(), daemon.client("other")
    read = agent.read_file("big.py", hashes=True, range=f"{LINES - 99}-{LINES}")
    scratch = AnchorIndex(lines)
    assert read.anchors == scratch.anchor_strings[LINES - 100 :]
    assert read.marks == scratch.marks(LINES - 100, LINES)
    other.ping()  # served while the file is big: nothing is left held

    step = LINES // HUNKS
    hunks = "".join(
        f"@@ -{step * k + 2},1 +{step * k + 2},1 @@\n-{lines[step * k + 1]}\n+changed {k}\n"
        for k in range(HUNKS)
    )
    data = (daemon.root / "big.py").read_bytes()
    done = agent.safe_patch("big.py", "--- a\n+++ b\n" + hunks, sha(data), include_content=False)
    for k in range(HUNKS):
        lines[step * k + 1] = f"changed {k}"
    assert (daemon.root / "big.py").read_text() == "".join(f"{line}\n" for line in lines)
    after = AnchorIndex(lines)
    assert [(c.line, c.hash) for c in done.changed_lines] == [
        (step * k + 2, after.anchor_strings[step * k + 1]) for k in range(HUNKS)
    ]
    again = agent.read_file("big.py", hashes=True, range="1-200")
    assert again.anchors == after.anchor_strings[:200]
