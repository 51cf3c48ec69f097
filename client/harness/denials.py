"""A refusal of the daemon, said to the model in its harness's words (`denial_reason`)."""

from __future__ import annotations

from typing import Any

from editjournal.client.harness.adapters import Adapter
from editjournal.client.harness.hookcall import EDIT, REASON_LIMIT, Call, positive_int
from editjournal.schemas.wire import Error


def denial_reason(error: Error, call: Call, path: str, adapter: type[Adapter]) -> str:
    """What the model reads, in its harness's words: the tool it called (`Edit`,
    `replace`), the lines it relied on and who changed them since, those lines as they
    are now, and what to do next in that harness. Built from the refusal's details,
    never from its message: the message speaks the daemon's tools and fields
    ("operation 1 (edit_file)", "details.delta"), which this model has never seen."""
    details = error.details
    what = _what(call, details)
    if error.code == "write_access_denied":
        return (
            f"editjournal: your {what} of {path} was not made: this session may not write in"
            " this workspace (the [access] list of its editjournal config). Do not retry it;"
            " tell the user if the change is needed."
        )
    found = details.get("delta")
    diff = str(found.get("diff") or "") if isinstance(found, dict) else ""
    parts = [f"editjournal: your {what} of {path} was not made: {_why(call, details)}"]
    parts += [_who(c, call.agent) for c in details.get("conflicts") or [] if _is(c)]
    if diff:
        parts.append("The file there now (- as you last saw it, + as it is now):")
        parts.append(_plain_diff(diff))
        if isinstance(found, dict) and found.get("omitted"):
            parts.append("(other parts of the file changed too; they are not shown here)")
    parts.append(adapter.redo(call, path, shown=bool(diff)))
    text = "\n".join(parts)
    return text if len(text) <= REASON_LIMIT else text[: REASON_LIMIT - 1] + "…"


def _what(call: Call, details: dict[str, Any]) -> str:
    """The call as the model made it: `Edit`, `write_file`, "MultiEdit (its edit 2)"."""
    index = details.get("edit")
    if len(call.edits) > 1 and isinstance(index, int):
        return f"{call.tool} (its edit {index} of {len(call.edits)})"
    return call.tool


def _why(call: Call, details: dict[str, Any]) -> str:
    """Why, in one sentence: lines it relied on changed, lines it was not shown, or a
    whole file it has not seen as it is."""
    stale = [n for s in details.get("stale") or [] if _is(s) for n in s.get("lines") or []]
    if call.kind == EDIT and stale:
        return f"it relies on {_lines(stale)}, which changed since you read {_it(stale)}."
    unseen = details.get("unseen_lines")
    if call.kind == EDIT and unseen:
        return f"it relies on {_lines(unseen)}, which your last read did not show you."
    if "unseen" in details:  # its latest read showed part of the file
        shown = _span(details.get("read_lines"))
        part = f" ({_lines(list(range(shown[0], shown[1] + 1)))})" if shown else ""
        since = (  # explained from its last full view, when the journal holds one
            ", and the file changed since you last saw all of it."
            if "base_version" in details
            else ", and you have not been shown all of it."
        )
        return f"it would replace the whole file, but your last read showed part of it{part}{since}"
    if "base_version" in details:
        return "it would replace the whole file, which changed since you read it."
    return "it would replace the whole file, which you have not read."


def _span(value: Any) -> tuple[int, int] | None:
    """A `[first, last]` pair of line numbers, or None."""
    if isinstance(value, list) and len(value) == 2:
        first, last = positive_int(value[0]), positive_int(value[1])
        if first is not None and last is not None:
            return first, last
    return None


def _is(item: Any) -> bool:
    return isinstance(item, dict)


def _it(lines: list[Any]) -> str:
    return "it" if len(set(lines)) == 1 else "them"


def _who(conflict: dict[str, Any], agent: str) -> str:
    """One change, for the model: who made it, which lines, and its journal version."""
    by = conflict.get("agent")
    if not by:
        by = "Someone outside the journal (a person, or a program)"
    elif by == agent:
        by = "You (an earlier call of this session)"
    lines = [n for n in conflict.get("lines") or [] if isinstance(n, int)]
    where = _lines(lines) if lines else "it"
    return f"{by} changed {where} (version {conflict.get('seq')})."


def _lines(numbers: list[Any], most: int = 8) -> str:
    """`line 5`, `lines 5-7, 12`: runs of consecutive numbers, the first `most` runs."""
    found = sorted({n for n in numbers if isinstance(n, int)})
    runs: list[list[int]] = []
    for n in found:
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    shown = [f"{a}" if a == b else f"{a}-{b}" for a, b in runs[:most]]
    more = ", …" if len(runs) > most else ""
    word = "line" if len(found) == 1 else "lines"
    return f"{word} {', '.join(shown)}{more}"


def _plain_diff(diff: str) -> str:
    """The daemon's delta without its anchors (` 12#a1b2c3|text` -> ` text`), each hunk
    headed by where it is now (`@@ -3,5 +3,6 @@` -> `at line 3:`)."""
    rows = []
    for row in diff.splitlines():
        if row.startswith("@@"):
            now = row.split("+", 1)[1].split(",", 1)[0].split(" ", 1)[0] if "+" in row else ""
            rows.append(f"  at line {now}:" if now.isdigit() else "  …")
            continue
        sign, rest = row[:1], row[1:]
        if sign in " +-" and "|" in rest and rest.split("|", 1)[0].split("#")[0].strip().isdigit():
            rest = rest.split("|", 1)[1]
        rows.append(f"    {sign}{rest}")
    return "\n".join(rows)
