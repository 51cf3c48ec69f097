"""`apply_patch` through a real daemon, with Codex's own implementation as the oracle.

`tests/unit/test_v4a.py` compares the pure engine with `codex-apply-patch` (Codex's
Rust crate, from PyPI) in memory. Here the whole tool is compared, files on disk:
the same patch is applied by Codex (`codex_apply_patch.apply_patch`, on disk, in a
scratch directory it is run from) and by the daemon (`client.apply_patch`, the
same files in a subdirectory of the workspace given as `workdir`), and the two
trees of files must agree:

- Codex's scenarios (`codex-rs/apply-patch/tests/fixtures/scenarios`), rebuilt
  inline from each one's name and intent; each is checked against Codex itself
  first, so a wrong transcription fails;
- generated trees and patches (add, delete, update, move; some broken);
- a property: an update made by diffing two texts turns the first into the second.

Codex applies a patch operation by operation and stops at the first that fails,
leaving the earlier ones written; we apply all or nothing. So where Codex refuses,
our files must be the ORIGINAL ones. The other deliberate differences (module
docstrings of `daemon.text.v4a` and `daemon.text.v4a_apply`) are named where a case
meets them. Every call skips the daemon's own safety check (boundary duplicates,
bracket balance): Codex has none, and generated lines trip it by chance.
"""

from __future__ import annotations

import difflib
import itertools
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from editjournal.client import Client, RequestError
from tests.patch_support import edited

codex = pytest.importorskip("codex_apply_patch", reason="codex-apply-patch is not installed")

Tree = dict[str, str]  # workspace-relative posix path -> text
# what we may answer when Codex refuses (anything else, internal_error first, is a bug here)
REFUSALS = {"invalid_diff", "invalid_params", "no_match", "file_not_found"}
_dirs = itertools.count()


# --- both sides ---------------------------------------------------------------------------------


def put(root: Path, tree: Tree) -> None:
    root.mkdir(parents=True)
    for path, text in tree.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.encode())


def files(root: Path) -> Tree:
    """Every file under `root` (directories left empty by a move or a delete are no file)."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes().decode()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@contextmanager
def working_directory(path: Path) -> Iterator[None]:
    """Codex's on-disk `apply_patch` resolves paths from the process's directory."""
    before = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


@dataclass(frozen=True)
class Run:
    applied: bool
    tree: Tree
    summary: list[str]  # the "A/M/D path" lines of the success message, sorted
    code: str | None = None  # ours: the refusal's code


def codex_run(root: Path, tree: Tree, patch: str) -> Run:
    """Codex's own tool on disk: it answers "Success. ..." or, refusing, "" (or raises
    for a patch it cannot parse), and keeps what it wrote before the failing operation."""
    put(root, tree)
    with working_directory(root):
        try:
            said = codex.apply_patch(patch)
        except Exception:  # RuntimeError for a patch it cannot parse
            said = ""
    applied = said.startswith("Success.")
    return Run(applied, files(root), sorted(said.splitlines()[1:]) if applied else [])


def our_run(client: Client, root: Path, tree: Tree, patch: str) -> Run:
    """The daemon's tool on the same files, `root` (in the workspace) as its workdir."""
    put(root, tree)
    workdir = root.relative_to(client.root).as_posix()
    try:
        result = client.apply_patch(patch, workdir=workdir, skip_safety_check=True)
    except RequestError as e:
        return Run(False, files(root), [], e.code)
    summary = [line.replace(f" {workdir}/", " ", 1) for line in result.message.splitlines()[1:]]
    return Run(True, files(root), sorted(summary))


def codex_would_write(ours: str) -> str:
    """Codex drops a file's final blank line when it updates the file (its line model
    takes that line for the final newline); we keep it. As in tests/unit/test_v4a.py."""
    return ours[:-1] if ours.endswith("\n\n") or ours == "\n" else ours


# --- Codex's scenarios ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    """One of Codex's scenario directories as data: `before` is input/, `after` is
    expected/ (Codex's final files whether it applied the patch or not), `applies`
    whether Codex says "Success". `refused` is our error code where we refuse, `ours`
    our final files where they differ from Codex's (None: the same). `older_codex`: the
    oracle (codex-apply-patch 0.4.0, from PyPI) predates the scenario and refuses it."""

    name: str
    before: Tree
    patch: str
    after: Tree
    applies: bool = True
    refused: str | None = None
    ours: Tree | None = None
    older_codex: bool = False


def envelope(*rows: str) -> str:
    return "\n".join(("*** Begin Patch", *rows, "*** End Patch")) + "\n"


STABLE = {"foo.txt": "stable\n"}
SCENARIOS = [
    Scenario(
        "001_add_file", {}, envelope("*** Add File: bar.md", "+This is a new file"),
        {"bar.md": "This is a new file\n"},
    ),
    Scenario(
        "002_multiple_operations",
        {"delete.txt": "obsolete\n", "modify.txt": "line1\nline2\n"},
        envelope(
            "*** Add File: nested/new.txt", "+created", "*** Delete File: delete.txt",
            "*** Update File: modify.txt", "@@", "-line2", "+changed",
        ),
        {"modify.txt": "line1\nchanged\n", "nested/new.txt": "created\n"},
    ),
    Scenario(
        "003_multiple_chunks",
        {"multi.txt": "line1\nline2\nline3\nline4\n"},
        envelope(
            "*** Update File: multi.txt", "@@", "-line2", "+changed2", "@@", "-line4", "+changed4"
        ),
        {"multi.txt": "line1\nchanged2\nline3\nchanged4\n"},
    ),
    Scenario(
        "004_move_to_new_directory",
        {"old/name.txt": "old content\n", "old/other.txt": "unrelated file\n"},
        envelope(
            "*** Update File: old/name.txt", "*** Move to: renamed/dir/name.txt", "@@",
            "-old content", "+new content",
        ),
        {"old/other.txt": "unrelated file\n", "renamed/dir/name.txt": "new content\n"},
    ),
    Scenario(
        "005_rejects_empty_patch", STABLE, envelope(), STABLE,
        applies=False, refused="invalid_diff",
    ),
    Scenario(
        "006_rejects_missing_context",
        {"modify.txt": "line1\nline2\n"},
        envelope("*** Update File: modify.txt", "@@", "-missing", "+changed"),
        {"modify.txt": "line1\nline2\n"},
        applies=False, refused="no_match",
    ),
    Scenario(
        "007_rejects_missing_file_delete", STABLE, envelope("*** Delete File: missing.txt"), STABLE,
        applies=False, refused="file_not_found",
    ),
    Scenario(
        "008_rejects_empty_update_hunk", STABLE, envelope("*** Update File: foo.txt"), STABLE,
        applies=False, refused="invalid_diff",
    ),
    Scenario(
        "009_requires_existing_file_for_update", STABLE,
        envelope("*** Update File: missing.txt", "@@", "-old", "+new"), STABLE,
        applies=False, refused="file_not_found",
    ),
    Scenario(
        "010_move_overwrites_existing_destination",
        {
            "old/name.txt": "from\n",
            "old/other.txt": "unrelated file\n",
            "renamed/dir/name.txt": "existing\n",
        },
        envelope(
            "*** Update File: old/name.txt", "*** Move to: renamed/dir/name.txt", "@@", "-from",
            "+new",
        ),
        {"old/other.txt": "unrelated file\n", "renamed/dir/name.txt": "new\n"},
    ),
    Scenario(
        "011_add_overwrites_existing_file",
        {"duplicate.txt": "old content\n"},
        envelope("*** Add File: duplicate.txt", "+new content"),
        {"duplicate.txt": "new content\n"},
    ),
    Scenario(
        "012_delete_directory_fails",
        {"dir/foo.txt": "stable\n"}, envelope("*** Delete File: dir"), {"dir/foo.txt": "stable\n"},
        applies=False, refused="is_a_directory",
    ),
    Scenario(
        "013_rejects_invalid_hunk_header", STABLE, envelope("*** Frobnicate File: foo"), STABLE,
        applies=False, refused="invalid_diff",
    ),
    Scenario(
        "014_update_file_appends_trailing_newline",
        {"no_newline.txt": "no newline at end"},
        envelope(
            "*** Update File: no_newline.txt", "@@", "-no newline at end", "+first line",
            "+second line",
        ),
        {"no_newline.txt": "first line\nsecond line\n"},
    ),
    # Deliberate: all or nothing. Codex keeps the file it added before the update that
    # fails; we write nothing at all.
    Scenario(
        "015_failure_after_partial_success_leaves_changes",
        {},
        envelope("*** Add File: created.txt", "+hello", "*** Update File: missing.txt", "@@",
                 "-old", "+new"),
        {"created.txt": "hello\n"},
        applies=False, refused="file_not_found", ours={},
    ),
    Scenario(
        "016_pure_addition_update_chunk",
        {"input.txt": "line1\nline2\n"},
        envelope("*** Update File: input.txt", "@@", "+added line 1", "+added line 2"),
        {"input.txt": "line1\nline2\nadded line 1\nadded line 2\n"},
    ),
    Scenario(
        "017_whitespace_padded_hunk_header",
        {"foo.txt": "old\n"},
        envelope("  *** Update File: foo.txt", "@@", "-old", "+new"),
        {"foo.txt": "new\n"},
    ),
    Scenario(
        "018_whitespace_padded_patch_markers",
        {"file.txt": "one\n"},
        " *** Begin Patch\n*** Update File: file.txt\n@@\n-one\n+two\n*** End Patch \n",
        {"file.txt": "two\n"},
    ),
    Scenario(
        "019_unicode_simple",
        {"foo.txt": "line1\nna\u00efve caf\u00e9\nline3\n"},
        envelope(
            "*** Update File: foo.txt", "@@", " line1", "-na\u00efve caf\u00e9",
            "+na\u00efve caf\u00e9 \u2705",
        ),
        {"foo.txt": "line1\nna\u00efve caf\u00e9 \u2705\nline3\n"},
    ),
    Scenario(
        "020_delete_file_success",
        {"keep.txt": "keep\n", "obsolete.txt": "obsolete\n"},
        envelope("*** Delete File: obsolete.txt"),
        {"keep.txt": "keep\n"},
    ),
    # Codex 0.4.0 trims the patch as a whole, not each marker line: it refuses this one.
    Scenario(
        "020_whitespace_padded_patch_marker_lines",
        {"file.txt": "one\n"},
        "*** Begin Patch \n*** Update File: file.txt\n@@\n-one\n+two\n *** End Patch\n",
        {"file.txt": "two\n"},
        older_codex=True,
    ),
    Scenario(
        "021_update_file_deletion_only",
        {"lines.txt": "line1\nline2\nline3\n"},
        envelope("*** Update File: lines.txt", "@@", " line1", "-line2", " line3"),
        {"lines.txt": "line1\nline3\n"},
    ),
    Scenario(
        "022_update_file_end_of_file_marker",
        {"tail.txt": "first\nsecond\n"},
        envelope(
            "*** Update File: tail.txt", "@@", " first", "-second", "+second updated",
            "*** End of File",
        ),
        {"tail.txt": "first\nsecond updated\n"},
    ),
    # Not Codex's scenarios: cases of the same kind where we deliberately differ.
    # Two operations on one file: Codex applies them one after the other; we plan every
    # operation against the files as they are, so we refuse the patch (invalid_params).
    Scenario(
        "x01_same_file_twice",
        {"f.txt": "a\nb\n"},
        envelope(
            "*** Update File: f.txt", "@@", "-a", "+A", "*** Update File: f.txt", "@@", "-b", "+B"
        ),
        {"f.txt": "A\nB\n"},
        refused="invalid_params", ours={"f.txt": "a\nb\n"},
    ),
    # A move onto its own path: Codex writes the new path, then removes the old one,
    # which is the same file, and so loses it. We update the file in place.
    Scenario(
        "x02_move_onto_itself",
        {"f.txt": "a\n"},
        envelope("*** Update File: f.txt", "*** Move to: f.txt", "@@", "-a", "+b"),
        {},
        ours={"f.txt": "b\n"},
    ),
    # A chunk of additions with an @@ header goes right after the header line (Codex:
    # at the end of the file, header or not).
    Scenario(
        "x03_additions_after_their_header",
        {"f.py": "def f():\n    pass\ndef g():\n    pass\n"},
        envelope("*** Update File: f.py", "@@ def f():", "+    x = 1"),
        {"f.py": "def f():\n    pass\ndef g():\n    pass\n    x = 1\n"},
        ours={"f.py": "def f():\n    x = 1\n    pass\ndef g():\n    pass\n"},
    ),
    # An updated file ending with a blank line keeps it (Codex drops it).
    Scenario(
        "x04_final_blank_line_kept",
        {"f.txt": "a\nb\n\n"},
        envelope("*** Update File: f.txt", "@@", "-a", "+A"),
        {"f.txt": "A\nb\n"},
        ours={"f.txt": "A\nb\n\n"},
    ),
    # A byte order mark is no part of the first line: a hunk with that line as context
    # finds it (Codex reads the mark as part of the line and finds no hunk).
    Scenario(
        "x05_byte_order_mark_is_no_part_of_the_first_line",
        {"f.txt": "\ufeffa\nb\n"},
        envelope("*** Update File: f.txt", "@@", " a", "-b", "+B"),
        {"f.txt": "\ufeffa\nb\n"},
        applies=False, ours={"f.txt": "\ufeffa\nB\n"},
    ),
    # An Add File over a file is written with that file's line endings (the daemon's
    # rule for every tool that writes into a file); Codex writes it with LF.
    Scenario(
        "x06_add_over_a_crlf_file_takes_its_endings",
        {"f.txt": "a\r\nb\r\n"},
        envelope("*** Add File: f.txt", "+x", "+y"),
        {"f.txt": "x\ny\n"},
        ours={"f.txt": "x\r\ny\r\n"},
    ),
    # Not a difference: an information separator (\x1f) is no whitespace to Codex's
    # lenient levels (Python's str.strip() would strip it), so no hunk is found.
    Scenario(
        "x07_information_separator_is_no_whitespace",
        {"f.txt": "x = 1\x1f\ny\n"},
        envelope("*** Update File: f.txt", "@@", " x = 1", "-y", "+Y"),
        {"f.txt": "x = 1\x1f\ny\n"},
        applies=False, refused="no_match",
    ),
]  # fmt: skip


@pytest.mark.parametrize("case", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_codexs_scenarios(client: Client, tmp_path: Path, case: Scenario) -> None:
    theirs = codex_run(tmp_path / "codex" / case.name, case.before, case.patch)
    if case.older_codex:
        assert (theirs.applied, theirs.tree) == (False, case.before), "Codex 0.4.0 applies it"
    else:
        assert (theirs.applied, theirs.tree) == (case.applies, case.after), "not Codex's outcome"
    ours = our_run(client, client.root / case.name, case.before, case.patch)
    assert ours.code == case.refused
    assert ours.tree == (case.after if case.ours is None else case.ours)
    if ours.applied and theirs.applied and case.ours is None:
        assert ours.summary == theirs.summary


@pytest.mark.parametrize("path", ["../../escaped.txt", "{tmp}/escaped.txt"], ids=["up", "absolute"])
def test_paths_outside_the_workspace_are_refused_where_codex_writes_them(
    client: Client, tmp_path: Path, path: str
) -> None:
    """Codex writes wherever a path points; we refuse a path outside the workspace, and
    the whole patch with it (the file added first is not written either). Both run one
    level below tmp_path (Codex from codex/, we from the workspace's work/), so the path
    names the same file, tmp_path/escaped.txt, for both."""
    patch = envelope(
        "*** Add File: inside.txt", "+in", f"*** Add File: {path.format(tmp=tmp_path)}", "+out"
    )
    escaped = tmp_path / "escaped.txt"
    theirs = codex_run(tmp_path / "codex" / "work", {}, patch)
    assert theirs.applied and escaped.read_text() == "out\n"
    escaped.unlink()
    ours = our_run(client, client.root / "work", {}, patch)
    assert ours.code == "path_outside_workspace" and ours.tree == {}
    assert not escaped.exists()


# --- a V4A writer: diffs as a model writes them ---------------------------------------------------


@dataclass(frozen=True)
class Hunk:
    """One `@@` chunk of a diff: its rows (" x", "-x", "+x"), its header, whether it
    ends at the end of the file, and where its old lines start in the old text."""

    start: int
    header: str | None
    rows: tuple[str, ...]
    end_of_file: bool

    @property
    def old(self) -> list[str]:
        return [row[1:] for row in self.rows if row[0] != "+"]


def hunks_of(
    old: list[str], new: list[str], context: int, headers: bool, end_of_file: bool
) -> list[Hunk]:
    """difflib's groups with `context` lines around each change; the header (when asked)
    is the nearest `def`/`class` line above the hunk and after the hunk before it."""
    out: list[Hunk] = []
    done = 0
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for group in matcher.get_grouped_opcodes(context):
        start, end = group[0][1], group[-1][2]
        above = [i for i in range(done, start) if old[i].lstrip().startswith(("def ", "class "))]
        header = old[above[-1]] if headers and above else None
        rows: list[str] = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                rows += [f" {s}" for s in old[i1:i2]]
            else:
                rows += [f"-{s}" for s in old[i1:i2]] + [f"+{s}" for s in new[j1:j2]]
        out.append(Hunk(start, header, tuple(rows), end_of_file and end == len(old)))
        done = end
    return out


def update_rows(path: str, hunks: list[Hunk], move_to: str | None = None) -> list[str]:
    rows = [f"*** Update File: {path}"] + ([f"*** Move to: {move_to}"] if move_to else [])
    for hunk in hunks:
        rows.append(f"@@ {hunk.header}" if hunk.header else "@@")
        rows += hunk.rows
        if hunk.end_of_file:
            rows.append("*** End of File")
    return rows


def lands_where_meant(old: list[str], hunks: list[Hunk]) -> bool:
    """Whether each hunk is found where it was cut from, as V4A finds it: its header's
    first occurrence from where the search stands, then its old lines' first occurrence
    after that (only at the end for `*** End of File`), the search going on after them.
    (Exact matches only: every line of `VOCABULARY` differs from the others by more than
    whitespace, and the patch is exact, so the lenient levels never decide.)"""
    at = 0
    for hunk in hunks:
        if hunk.header is not None:
            at = old.index(hunk.header, at) + 1
        pattern = hunk.old
        last = len(old) - len(pattern)
        starts = [last] if hunk.end_of_file else range(at, last + 1)
        found = next((i for i in starts if i >= at and old[i : i + len(pattern)] == pattern), None)
        if found != hunk.start:
            return False
        at = found + len(pattern)
    return True


def unambiguous_hunks(old: list[str], new: list[str], headers: bool, eof: bool) -> list[Hunk]:
    """3 lines of context, more where that finds a hunk elsewhere (as a careful model
    would add), up to the whole file, which is found only where it is."""
    for context in (3, 6, 12, len(old) + 1):
        hunks = hunks_of(old, new, context, headers, eof)
        if lands_where_meant(old, hunks):
            event(f"context {'3' if context == 3 else 'widened'}")
            return hunks
    raise AssertionError("a hunk of the whole file is found where it is")  # pragma: no cover


# --- generated texts ------------------------------------------------------------------------------

# Stripped of whitespace, no two lines are alike, so the search levels agree (as in
# test_v4a) and the writer's own exact search above is V4A's. Indentation, blank lines,
# `def` and `class` lines (headers) are there.
VOCABULARY = [
    "",
    "def f():",
    "class A:",
    "    def g(self):",
    "        return 1",
    "    pass",
    "x = 1",
    "}",
    "a b",
    'msg = "it\'s a-b"',
    "- item",
    "s = 'x'",
    "caf\u00e9 \u2705",
]
line = st.one_of(st.sampled_from(VOCABULARY), st.text(alphabet="abc", min_size=1, max_size=3))
lines = st.lists(line, max_size=12)
# Texts that repeat a block: 3 lines of context may be found in the wrong copy.
blocks = st.lists(line, min_size=4, max_size=8)
texts = st.one_of(
    lines,
    blocks.map(lambda block: block * 2),
    st.tuples(blocks, st.lists(line, max_size=4)).map(lambda t: [*t[0], *t[1], *t[0]]),
)


def loosened(text: str, how: int) -> str:
    """The line as only V4A's lenient levels find it: trailing whitespace added, the
    indentation changed, or its ASCII punctuation written typographically."""
    if how == 0:
        return text + "  "
    if how == 1:
        return "  " + text.strip() + " "
    return text.replace("-", "\u2013").replace('"', "\u201c").replace("'", "\u2019")


def loose(tree: Tree) -> dict[str, list[str]]:
    """The files' lines as the loosest level compares them (whitespace at either end
    and typographic punctuation aside)."""
    plain = str.maketrans({"\u2013": "-", "\u201c": '"', "\u2019": "'"})
    return {p: [s.strip().translate(plain) for s in t.split("\n")] for p, t in tree.items()}


def text_of(rows: list[str], final_newline: bool = True) -> str:
    return "\n".join(rows) + ("\n" if rows and final_newline else "")


# --- generated trees and patches ------------------------------------------------------------------

PATHS = ("a.py", "b.txt", "pkg/c.py", "pkg/sub/d.py", "e.md", "pkg/f.txt")


@dataclass(frozen=True)
class Case:
    before: Tree
    patch: str
    updated: frozenset[str]  # where an update's result is written
    crlf: frozenset[str]  # where a CRLF file is, or an update of one is written
    crlf_kept: frozenset[str]  # where we write CRLF: an update of a CRLF file, an add over one
    twice: bool  # two operations on one file: we refuse the patch
    lenient: bool  # a line only the lenient levels find: context keeps the file's text

    def comparable(self, tree: Tree, ours: bool) -> dict[str, str | list[str]]:
        """The files modulo our deliberate differences from Codex: an updated file's
        final blank line (Codex drops it); in a CRLF file, the endings (Codex writes
        the lines of its hunks with LF, and drops a final blank line only when the
        patch wrote it) and an added file's (we write it with the endings of the file
        it replaces); with `lenient`, each line's whitespace and punctuation."""
        out: dict[str, str | list[str]] = {}
        for path, text in tree.items():
            if path in self.crlf:
                text = text.replace("\r\n", "\n").rstrip("\n")
            elif ours and path in self.updated:
                text = codex_would_write(text)
            out[path] = loose({path: text})[path] if self.lenient else text
        return out


@st.composite
def cases(draw: st.DrawFn) -> Case:
    """A tree of 1-4 files (now and then a CRLF one) and a patch of 1-3 operations on
    distinct paths (and, now and then, a last one on a path already changed): adds (over
    a file, too), deletes and updates (of missing files, too), updates moved (onto a
    file, too) or broken (one context or removed line changed, so Codex may not find
    the hunk, or loosened, so only its lenient levels do)."""
    paths = draw(st.lists(st.sampled_from(PATHS), min_size=1, max_size=4, unique=True))
    before: Tree = {}
    for path in paths:
        text = text_of(draw(texts), draw(st.integers(0, 5)) > 0)
        if text.endswith("\n") and draw(st.sampled_from("LLLLCLLLL")) == "C":
            # with a final newline: in Codex's model a CRLF file's last line without one
            # is the only line its exact level can match
            text = text.replace("\n", "\r\n")
        before[path] = text
    crlf = {p for p, t in before.items() if "\r\n" in t}
    free = list(PATHS)
    rows: list[str] = []
    updated: set[str] = set()
    crlf_kept: set[str] = set()
    touched: list[str] = []
    lenient = False

    def take(prefer_existing: bool) -> str:
        existing = [p for p in free if p in before]
        pool = existing if existing and prefer_existing and draw(st.integers(0, 5)) else free
        path = draw(st.sampled_from(pool))
        free.remove(path)
        touched.append(path)
        return path

    for _ in range(draw(st.integers(1, 3))):
        if not free:
            break
        kind = draw(st.sampled_from(["add", "delete", "update", "update", "update"]))
        path = take(prefer_existing=kind != "add")
        if kind == "add":
            rows += [f"*** Add File: {path}", *(f"+{s}" for s in draw(lines))]
            if path in crlf:
                crlf_kept.add(path)
            continue
        if kind == "delete":
            rows.append(f"*** Delete File: {path}")
            continue
        old = before.get(path, "").splitlines()
        new = draw(edited(old, line))
        if new == old:
            new.append("zz")  # a change, so the update has a hunk
        move_to = take(prefer_existing=False) if free and draw(st.integers(0, 2)) == 0 else None
        hunks = hunks_of(old, new, 3, draw(st.booleans()), draw(st.booleans()))
        update = update_rows(path, hunks, move_to)
        rows_at = [i for i, r in enumerate(update) if r[:1] in " -"]
        damage = draw(st.sampled_from(["none", "other line", "none", "loosened"]))
        if damage == "other line" and rows_at:
            at = draw(st.sampled_from(rows_at))
            update[at] = update[at][0] + draw(line)
        how = draw(st.integers(0, 2))
        rows_at = [i for i in rows_at if update[i][1:].strip()]  # blank lines stay blank
        typographic = [i for i in rows_at if set(update[i][1:]) & set("-'\"")]
        if damage == "loosened" and rows_at:
            at = draw(st.sampled_from(typographic if how == 2 and typographic else rows_at))
            update[at] = update[at][0] + loosened(update[at][1:], how)
            lenient = True
        rows += update
        updated.add(move_to or path)
        if path in crlf:
            crlf.add(move_to or path)
            crlf_kept.add(move_to or path)
    twice = draw(st.sampled_from(["once"] * 5 + ["twice"] + ["once"] * 4)) == "twice"
    if twice:
        again = draw(st.sampled_from(touched))
        rows += (
            [f"*** Add File: {again}", "+again"]
            if draw(st.booleans())
            else [f"*** Delete File: {again}"]
        )
    return Case(
        before,
        envelope(*rows),
        frozenset(updated),
        frozenset(crlf),
        frozenset(crlf_kept),
        twice,
        lenient,
    )


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=cases())
def test_generated_patches_apply_as_codex_applies_them_or_not_at_all(
    client: Client, tmp_path: Path, case: Case
) -> None:
    """Codex applies the patch: so do we, with the same files (modulo the documented
    differences) and the same summary. Codex refuses: so do we, and no file changes
    (Codex keeps what it wrote before the failing operation). Two operations on one
    file: we refuse, whatever Codex does."""
    n = next(_dirs)
    theirs = codex_run(tmp_path / "codex" / str(n), case.before, case.patch)
    ours = our_run(client, client.root / f"gen{n}", case.before, case.patch)
    event("two operations on one file" if case.twice else f"Codex applied: {theirs.applied}")
    event(f"lenient: {case.lenient}, CRLF: {bool(case.crlf)}")
    if case.twice:
        assert ours.code == "invalid_params" and ours.tree == case.before
    elif theirs.applied:
        assert ours.applied, f"Codex applies, we refuse ({ours.code}):\n{case.patch}"
        assert case.comparable(ours.tree, ours=True) == case.comparable(theirs.tree, ours=False)
        assert ours.summary == theirs.summary
        for path in case.crlf_kept & ours.tree.keys():
            assert "\n" not in ours.tree[path].replace("\r\n", ""), "CRLF is no longer CRLF"
    else:
        assert not ours.applied, f"Codex refuses, we apply:\n{case.patch}"
        assert ours.code in REFUSALS
        assert ours.tree == case.before, "a refused patch changed files"


# --- the property: a diff's patch turns the old text into the new one -----------------------------


BLOCK = ["def f():", "    pass", "x = 1", "a", "b", "c", "}", "a b"]


@st.composite
def text_pairs(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    old = draw(texts)
    new = draw(edited(old, line))
    return old, (new if new != old else [*new, "zz"])


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(pair=text_pairs(), headers=st.booleans(), end_of_file=st.booleans())
# 3 lines of context around the change in the second copy are in the first one too, and
# so is the header: the writer widens the context until the hunk is found only there.
@example(pair=(BLOCK * 2, [*BLOCK, *BLOCK[:4], "zz", *BLOCK[5:]]), headers=True, end_of_file=False)
def test_a_diffs_patch_turns_the_old_text_into_the_new(
    client: Client, pair: tuple[list[str], list[str]], headers: bool, end_of_file: bool
) -> None:
    """Texts ending with a newline; the patch is the diff's, its hunks found only where
    they were cut from. Through the daemon the old text becomes the new one exactly."""
    old_rows, new_rows = pair
    old, new = text_of(old_rows), text_of(new_rows)
    patch = envelope(
        *update_rows("f.py", unambiguous_hunks(old_rows, new_rows, headers, end_of_file))
    )
    # the writer is right about V4A: Codex too gets the new text (less a final blank line)
    assert codex.apply_patch_in_memory(patch, {"f.py": old}).files["f.py"] == codex_would_write(new)
    ours = our_run(client, client.root / f"prop{next(_dirs)}", {"f.py": old}, patch)
    assert ours.applied, ours.code
    assert ours.tree == {"f.py": new}
