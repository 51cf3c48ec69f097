"""The hook over HTTP's worker: `editjournal hook`'s decision, kept warm for the daemon.

The daemon's HTTP endpoint (daemon/runtime/hookhttp.py) may not import the client,
and the decision is the client's (`hook.decide`): so the daemon starts this process
once, on the first authorised request, and hands it each payload as one line of JSON
on stdin, `{"harness", "payload"}` (the payload as the text the harness POSTed). It
answers one line on stdout, `{"output", "notes"}`: `output` is exactly what
`editjournal hook HARNESS` would print (None: nothing, the call allowed), `notes`
what it would say on stderr. Like any client it sends its requests over the daemon's
socket to the thread that owns the state; it never touches the journal itself.

It must never answer anything the command hook would not: the same `decide`, the same
fail-open rule (a payload it cannot read, a problem, an error of ours: allowed, said).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from editjournal.client.harness.adapters import ADAPTERS
from editjournal.client.harness.hook import _unreadable, decide
from editjournal.client.harness.hookcall import PAYLOAD_ERRORS, HookProblem


def answer(harness: str, body: str, workspace: Path) -> dict[str, Any]:
    """What `editjournal hook HARNESS` does with `body` on stdin, as data."""
    notes: list[str] = []
    if harness not in ADAPTERS:
        notes.append(f"unknown harness {harness or '(none)'!r}; one of {', '.join(ADAPTERS)}")
        return {"output": None, "notes": notes}
    try:
        payload = json.loads(body or "null")
    except PAYLOAD_ERRORS as e:
        why = _unreadable(e)
        notes.append(f"the hook payload is not JSON it can read ({why}): the call is allowed")
        return {"output": None, "notes": notes}
    try:
        output = decide(payload, harness, workspace, note=notes.append)
    except HookProblem as e:  # quiet: its session was told already (unserved.py)
        notes += [] if e.quiet else [f"{e}: the call is allowed"]
        output = None
    except Exception as e:  # never a dead worker for one payload
        notes.append(f"unexpected {type(e).__name__}: {e}: the call is allowed")
        output = None
    return {"output": output, "notes": notes}


def main(argv: list[str]) -> int:
    workspace = Path(argv[0])
    for line in sys.stdin:
        try:
            asked = json.loads(line)
            said = answer(str(asked["harness"]), str(asked["payload"]), workspace)
        except (ValueError, KeyError, TypeError) as e:
            said = {"output": None, "notes": [f"the daemon sent a line it cannot read: {e}"]}
        sys.stdout.write(json.dumps(said) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
