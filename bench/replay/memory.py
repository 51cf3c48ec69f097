"""What agent A believes a file is, in the multi-hunk play: its read plus its own edits.

A read the file once, before B wrote, with the tool's default window; then it
writes its hunks top to bottom. Its view `lines` is the parent with its own
landed hunks applied — never B's change, unless a read showed it. For the
anchored writer the view also keeps, per line, the anchor row A was shown: from
its read (line numbers shifted by its own edits' net changes), from its edit
replies (`changed_lines`) for the lines it wrote, or from a later read of a
window beyond the first one — which shows the file as it is, B's change
included, so what that window shows replaces the view's lines there. A line A
was never shown an anchor for holds None. Each line also keeps the parent line
it came from (`origins`), which places A's next hunk. The view only remembers:
it never calls the daemon except through `read_window`, the one read an agent
makes for a hunk beyond its first window.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

import msgspec

from bench.replay.cases import Hunk
from bench.replay.tools import Rows
from editjournal.client import Client
from editjournal.schemas.tools import AnchoredLine

WINDOW_ABOVE = 20  # lines an agent reads above the hunk it goes to look at
SLACK = 200  # how far another's change may have moved the window's text


@dataclass
class Memory:
    """A's view of one file: its lines, the anchor rows it holds and the latest sha."""

    lines: list[str]
    rows: list[AnchoredLine | None]
    origins: list[int | None]  # the parent line (0-based) each view line is; None: new
    sha: str  # the latest SHA-256 A was given (its read, then its writes' replies)
    window_reads: int = 0
    landed: list[Hunk] = field(default_factory=list)

    @classmethod
    def after_read(cls, parent: list[str], read: list[AnchoredLine], sha: str) -> Memory:
        """The view right after A's first read (rows only for the lines it served)."""
        rows: list[AnchoredLine | None] = [None] * len(parent)
        for row in read:
            rows[row.line - 1] = row
        return cls(list(parent), rows, list(range(len(parent))), sha)

    def placed(self, h: Hunk) -> Hunk:
        """Hunk `h` (parent coordinates) where A believes it is now: at the view line
        that is parent line `h.start` (the first one after it, for an insertion)."""
        start = next((i for i, o in enumerate(self.origins) if o is not None and o >= h.start),
                     len(self.lines))  # fmt: skip
        return Hunk(start, start + h.end - h.start, h.new)

    def text(self) -> str:
        return "".join(line + "\n" for line in self.lines)

    def after(self, h: Hunk) -> str:
        """The view's text with hunk `h` (parent coordinates) applied."""
        v = self.placed(h)
        return "".join(line + "\n" for line in [*self.lines[: v.start], *v.new,
                                                *self.lines[v.end :]])  # fmt: skip

    def wrote(self, h: Hunk, shown: list[AnchoredLine], sha: str | None = None) -> None:
        """A's hunk `h` landed: its lines enter the view, their anchors from the reply's
        `shown` rows (matched by text, in order); rows below shift by its net change."""
        v = self.placed(h)
        net = len(v.new) - (v.end - v.start)
        below = [_moved(r, net) for r in self.rows[v.end :]]
        self.lines[v.start : v.end] = v.new
        self.rows[v.start :] = [*_matched(list(v.new), shown), *below]
        self.origins[v.start : v.end] = [None] * len(v.new)
        self.landed.append(h)
        if sha is not None:
            self.sha = sha

    def missing(self, v: Hunk) -> bool:
        """Whether A lacks an anchor it needs for `v` (view coordinates): the hunk's own
        lines and one neighbour each side."""
        lo, hi = max(0, v.start - 1), min(len(self.lines), v.end + 1)
        return any(r is None for r in self.rows[lo:hi])

    def read_window(self, client: Client, path: str, v: Hunk) -> None:
        """Read the default window from a little above `v`, as an agent with anchors
        does before it edits beyond its first read. The rows it is shown are matched to
        the view by text; where another's change shows between matched lines, the view
        takes what the read showed (A has seen it now)."""
        offset = max(1, v.start + 1 - WINDOW_ABOVE)
        got = client.read_file(path, hashes=True, offset=offset).lines or []
        self.window_reads += 1
        lo = offset - 1
        hi = min(len(self.lines), lo + len(got) + SLACK)
        m = difflib.SequenceMatcher(None, self.lines[lo:hi], [r.text for r in got], False)
        ops = m.get_opcodes()
        inner = [i for i, op in enumerate(ops) if op[0] == "equal"]
        if not inner:
            return
        # bottom up, so the view's indices above each splice stay valid
        for tag, i1, i2, j1, j2 in reversed(ops[inner[0] : inner[-1] + 1]):
            shown = got[j1:j2]
            self.lines[lo + i1 : lo + i2] = [r.text for r in shown]
            self.rows[lo + i1 : lo + i2] = shown
            if tag != "equal":
                self.origins[lo + i1 : lo + i2] = [None] * len(shown)

    def anchor_rows(self) -> Rows:
        """The rows as `tools.anchored_ops` takes them, keyed by view line (1-based). A
        line without an anchor gets a low-quality stand-in: ops widen past it, as an
        agent widens past a line it cannot anchor."""
        out: Rows = {}
        for n, (text, row) in enumerate(zip(self.lines, self.rows, strict=True), 1):
            out[n] = row or AnchoredLine(n, "", "low", text, unique=False)
        return out


def _moved(row: AnchoredLine | None, net: int) -> AnchoredLine | None:
    if row is None or net == 0:
        return row
    return msgspec.structs.replace(row, line=row.line + net)


def _matched(new: list[str], shown: list[AnchoredLine]) -> list[AnchoredLine | None]:
    """The reply's rows for A's new lines, matched in order by text; None where the
    reply showed none."""
    out: list[AnchoredLine | None] = []
    rest = list(shown)
    for text in new:
        k = next((i for i, r in enumerate(rest) if r.text == text), None)
        out.append(None if k is None else rest[k])
        rest = rest if k is None else rest[k + 1 :]
    return out
