"""One agent of the concurrency storm, run as its own process.

`python -m tests.e2e.storm_worker ROOT AGENT EDITS SEED REPORT`: make EDITS
anchored edits on `shared.txt`, each replacing one line that still holds its
original text with a line only this edit writes; re-read after every
`anchor_stale`. Writes a JSON report of what was acknowledged and rejected.
"""

from __future__ import annotations

import json
import random
import sys

from editjournal.client import Client, RequestError

PATH = "shared.txt"


def untouched(client: Client) -> list[tuple[str, str]]:
    """(anchor, text) of lines still holding original text, as this agent now sees them."""
    rows = client.read_file(PATH, hashes=True, max_lines=100_000).lines or []
    return [(r.hash, r.text) for r in rows if r.text.startswith("orig ") and r.unique]


def run(root: str, agent: str, edits: int, seed: int) -> dict[str, list[dict[str, object]]]:
    rng = random.Random(seed)
    acked: list[dict[str, object]] = []
    refused: list[dict[str, object]] = []
    with Client(root, agent, autostart=False, timeout=120) as client:
        rows = untouched(client)
        for n in range(edits):
            if not rows:
                rows = untouched(client)
            anchor, text = rows.pop(rng.randrange(len(rows)))
            new = f"{agent} edit {n}"
            try:
                result = client.edit(PATH, [{"op": "replace_line", "hash": anchor, "content": new}])
            except RequestError as e:
                seq = client.last_response.seq if client.last_response else None
                refused.append({"target": text, "code": e.code, "details": e.details, "seq": seq})
                rows = untouched(client)
                continue
            rebased = result.rebased_from_version is not None
            acked.append({"target": text, "new": new, "seq": result.version, "rebased": rebased})
    return {"acked": acked, "refused": refused}


if __name__ == "__main__":
    root, agent, edits, seed, report = sys.argv[1:6]
    outcome = run(root, agent, int(edits), int(seed))
    with open(report, "w") as f:
        json.dump(outcome, f)
