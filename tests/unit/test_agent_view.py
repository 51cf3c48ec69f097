"""The agent's view (`daemon.text.view`) against a model that follows line identities.

The model edits two lists of line identities: the file (everyone's changes) and the
agent's view (its own changes only). `agent_view` sees none of that: only the read
content, each step's content and exact `line_changes`, and whose step it was. It must
rebuild the view's text and where each of its lines is in the file now. Repeated
texts (a two-letter alphabet) make sure lines are followed by identity, not by text.
"""

from __future__ import annotations

from itertools import count

from hypothesis import given, settings
from hypothesis import strategies as st

from editjournal.daemon.text.rebase import Step
from editjournal.daemon.text.view import agent_view

TEXTS = st.sampled_from(["", "x", "}"])


@st.composite
def histories(
    draw: st.DrawFn,
) -> tuple[list[str], list[Step], list[bool], list[str], list[str], list[int | None]]:
    ids = count()
    text: dict[int, str] = {}

    def fresh(n: int) -> list[int]:
        made = [next(ids) for _ in range(n)]
        for i in made:
            text[i] = draw(TEXTS)
        return made

    read = fresh(draw(st.integers(0, 8)))
    actual, view = list(read), list(read)
    steps: list[Step] = []
    own: list[bool] = []
    for _ in range(draw(st.integers(0, 6))):
        mine = draw(st.booleans())
        before = list(actual)
        held = [i for i, identity in enumerate(actual) if identity in view]
        if mine and held:  # the agent changes lines it holds (a run of them)
            first = draw(st.sampled_from(held))
            run = [first]
            while run[-1] + 1 < len(actual) and actual[run[-1] + 1] in view:
                run.append(run[-1] + 1)
            end = first + draw(st.integers(0, len(run)))
        elif mine:
            first = end = draw(st.integers(0, len(actual)))
        else:
            first = draw(st.integers(0, len(actual)))
            end = draw(st.integers(first, len(actual)))
        new = fresh(draw(st.integers(0 if end > first else 1, 3)))
        removed = actual[first:end]
        actual[first:end] = new
        if mine:
            view[:] = [i for i in view if i not in removed]
            above = next((actual[k] for k in range(first - 1, -1, -1) if actual[k] in view), None)
            at = 0 if above is None else view.index(above) + 1
            view[at:at] = new
        lines = [text[i] for i in actual]
        steps.append(
            Step(tuple(lines), str(len(steps)), str(len(steps) + 1), [(first, end, len(new))])
        )
        own.append(mine)
        del before
    where = {identity: n for n, identity in enumerate(actual)}
    mapping = [where.get(i) for i in view]
    return (
        [text[i] for i in read],
        steps,
        own,
        [text[i] for i in actual],
        [text[i] for i in view],
        mapping,
    )


@settings(max_examples=300, deadline=None)
@given(histories())
def test_the_view_is_the_read_with_only_the_agents_own_changes(
    history: tuple[list[str], list[Step], list[bool], list[str], list[str], list[int | None]],
) -> None:
    read, steps, own, current, expected_view, expected_map = history
    view = agent_view(read, "0", steps, own, current)
    assert list(view.lines) == expected_view
    assert view.to_current == expected_map
    gone = {n for n, p in enumerate(expected_map) if p is None}
    assert set(view.changed_by) == gone


def test_lines_another_agent_changed_name_its_step() -> None:
    read = ["a", "b", "c", "d"]
    theirs = Step(("a", "B", "c", "d"), "r", "1", [(1, 2, 1)])
    mine = Step(("a", "B", "c", "d", "e"), "1", "2", [(4, 4, 1)])
    view = agent_view(read, "r", [theirs, mine], [False, True], list(mine.lines))
    assert view.lines == ("a", "b", "c", "d", "e")
    assert view.to_current == [0, None, 2, 3, 4]
    assert view.changed_by == {1: 0}
