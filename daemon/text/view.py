"""What an agent believes a file to be: the version it read with its own writes applied. Pure.

Agents read once and then make several edits from memory. After its first
edit was carried over another agent's change, the journal's snapshot of the
agent is the carried result — lines it never saw included — while the agent
still holds the file as it read it plus its own changes. A text writer's
`old_string` (or hunk) made from that belief matches neither the current
file nor the snapshot when it quotes a line the other agent changed. This
module rebuilds the belief (`View`) from the read version and every recorded
change since, keeping the agent's own changes and leaving out everyone
else's, with a line map from it to the current content: an edit planned in
the view is carried over the others' changes exactly as one planned in a
stored version is (`daemon.text.rebase`), landing where its own lines are
untouched and refused, naming who changed them, where they are not.

Lines are followed by identity, not by text, so a repeated line (a blank, a
closing brace) is never confused with its twin.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import count

from editjournal.daemon.text.rebase import LineMap, Step, line_map, step_map


@dataclass(frozen=True)
class View:
    """The agent's belief, and where each of its lines is now."""

    lines: tuple[str, ...]
    to_current: LineMap  # view line (0-based) -> current line, or None: changed since
    # view line -> index of the step that changed it (None: no single recorded step did,
    # the content was diffed against the file as it is); only for lines gone from current
    changed_by: dict[int, int | None]


def agent_view(
    read: Sequence[str],
    read_sha: str | None,
    steps: Sequence[Step],
    own: Sequence[bool],
    current: Sequence[str],
) -> View:
    """`read` with every step marked `own` applied and the others left out.

    `steps` are the recorded changes since the read, oldest first, each with the
    content it left (`own[k]`: step k is the agent's own write); `current` is the
    file now (the steps may not end there: a change never stored is diffed across).
    """
    fresh = count(len(read))
    view: list[int] = list(range(len(read)))  # the view as line identities
    text: dict[int, str] = dict(enumerate(read))
    here: list[int | None] = list(view)  # each line of the file at this step: its identity
    changed_by: dict[int, int | None] = {}
    previous, previous_sha = read, read_sha
    for k, step in enumerate(steps):
        mapping = step_map(previous, previous_sha, step)
        if own[k]:
            here = _own_step(here, mapping, step.lines, view, text, fresh)
        else:
            here = _others_step(here, mapping, len(step.lines), k, changed_by)
        previous, previous_sha = step.lines, step.sha256
    if list(previous) != list(current):
        here = _others_step(here, line_map(previous, current), len(current), None, changed_by)
    where = {identity: n for n, identity in enumerate(here) if identity is not None}
    to_current = [where.get(identity) for identity in view]
    gone = {n: changed_by.get(identity) for n, identity in enumerate(view) if identity not in where}
    return View(tuple(text[i] for i in view), to_current, gone)


def _others_step(
    here: list[int | None],
    mapping: LineMap,
    new_len: int,
    k: int | None,
    changed_by: dict[int, int | None],
) -> list[int | None]:
    """Someone else's change: the view stays; lines of it the change removed are gone
    from the file (remembered by the first step that removed them)."""
    after: list[int | None] = [None] * new_len
    for old, new in enumerate(mapping):
        identity = here[old]
        if new is not None:
            after[new] = identity
        elif identity is not None:
            changed_by.setdefault(identity, k)
    return after


def _own_step(
    here: list[int | None],
    mapping: LineMap,
    new_lines: Sequence[str],
    view: list[int],
    text: dict[int, str],
    fresh: count[int],
) -> list[int | None]:
    """The agent's own change: what it removed leaves the view, what it wrote enters
    it, each new line after the nearest line above it that the view holds. Lines of
    others' the write was carried over stay out of the view, as they were."""
    after: list[int | None] = [None] * len(new_lines)
    removed: set[int] = set()
    for old, new in enumerate(mapping):
        identity = here[old]
        if new is not None:
            after[new] = identity
        elif identity is not None:
            removed.add(identity)
    view[:] = [identity for identity in view if identity not in removed]
    position = {identity: n for n, identity in enumerate(view)}
    kept = {new for new in mapping if new is not None}
    inserted: list[tuple[int, int]] = []  # (view position, identity), in file order
    above = -1  # the view position of the last line above that the view holds
    for n, identity in enumerate(after):
        if identity is not None:
            above = position.get(identity, above)
        elif n not in kept:  # a line the write wrote
            identity = next(fresh)
            text[identity] = new_lines[n]
            after[n] = identity
            inserted.append((above + 1, identity))
    for offset, (at, identity) in enumerate(inserted):
        view.insert(at + offset, identity)
    return after
