"""Parsing OpenAI's patch envelope ("V4A", Codex CLI's `apply_patch`). Pure.

The format, as Codex describes it (`apply_patch_tool_instructions.md`)::

    *** Begin Patch
    *** Add File: hello.txt
    +Hello world
    *** Update File: src/app.py
    *** Move to: src/main.py
    @@ def greet():
    -print("Hi")
    +print("Hello, world!")
    *** Delete File: obsolete.txt
    *** End Patch

This module turns such text into plain data (`Patch` of `AddFile`,
`DeleteFile`, `UpdateFile` with their `Chunk`s) or raises `PatchParseError`
naming the 1-based line of the patch. Applying a chunk is `v4a_apply`'s.

It tolerates what Codex's own parser (`codex-rs/apply-patch/src/parser.rs`)
tolerates: markers padded with whitespace, a missing final newline, CRLF
patch text, a heredoc wrapper (`<<EOF`, `<<'EOF'`, `<<"EOF"`, also with the
`apply_patch` command in front, as a model writes it for a shell), blank lines
between chunks, and a first chunk without an `@@` line. A little more, on
purpose (Codex refuses these, and what they mean is plain):

- `@@` headers may be stacked (`@@ class A` then `@@ def f():`), as Codex's own
  instructions teach; each narrows the search after the one before.
- `@@ ` with only whitespace after it is no header (Codex searches for a blank
  line); `@@` and a tab starts a header as `@@ ` does (Codex refuses it);
  headers, paths and `*** Move to:` / `*** End of File` lines are stripped of
  padding; blank lines between operations are skipped.
- An `*** Update File:` with a `*** Move to:` and no chunk is a pure rename.

What it must never do: touch a file, resolve a path, or judge whether one is
allowed (paths are returned as written; the daemon confines them).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

BEGIN = "*** Begin Patch"
END = "*** End Patch"
END_OF_FILE = "*** End of File"
MOVE_TO = "*** Move to:"
_OPERATION = re.compile(r"^\*\*\*\s*(Add|Delete|Update) File:\s*(.*?)\s*$")
_HEREDOC = re.compile(r"""^(?:(?:apply_patch|applypatch)\s+)?<<-?\s*(['"]?)(\w+)\1$""")
_ROW_KINDS = " -+"


class V4AError(Exception):
    """Root of the envelope engine's errors (parsing and applying)."""


class PatchParseError(V4AError):
    """The patch text is malformed; `line` is the 1-based line of the patch."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.message = message


@dataclass(frozen=True, slots=True)
class Row:
    """One hunk line: `kind` is " " (context), "-" (removed) or "+" (added)."""

    kind: str
    text: str


@dataclass(frozen=True, slots=True)
class Chunk:
    """One `@@` hunk: its headers (lines to find first, in order), its rows, and
    whether it must sit at the end of the file. `line` is where it starts in the patch."""

    headers: tuple[str, ...]
    rows: tuple[Row, ...]
    end_of_file: bool = False
    line: int = 0

    @property
    def old_lines(self) -> tuple[str, ...]:
        """Context and removed lines, in order: what must be found in the file."""
        return tuple(row.text for row in self.rows if row.kind != "+")

    @property
    def new_lines(self) -> tuple[str, ...]:
        """Context and added lines, in order: what the found block becomes."""
        return tuple(row.text for row in self.rows if row.kind != "-")


@dataclass(frozen=True, slots=True)
class AddFile:
    path: str
    content: str  # every "+" line and a newline after each (Codex's): "" when none
    line: int = 0


@dataclass(frozen=True, slots=True)
class DeleteFile:
    path: str
    line: int = 0


@dataclass(frozen=True, slots=True)
class UpdateFile:
    path: str
    move_to: str | None
    chunks: tuple[Chunk, ...]
    line: int = 0


Operation = AddFile | DeleteFile | UpdateFile


@dataclass(frozen=True, slots=True)
class Patch:
    operations: tuple[Operation, ...]


@dataclass(frozen=True, slots=True)
class _Line:
    number: int  # 1-based in the text given to `parse`
    text: str  # without its terminator

    @property
    def marker(self) -> str:
        return self.text.strip()


def parse(text: str) -> Patch:
    """The envelope's operations, in order; `PatchParseError` for anything malformed."""
    body = _body(_lines(text))
    operations: list[Operation] = []
    at = 0
    while at < len(body):
        if not body[at].marker:
            at += 1  # a blank line between operations says nothing
            continue
        operation, at = _operation(body, at)
        operations.append(operation)
    return Patch(tuple(operations))


def _lines(text: str) -> list[_Line]:
    """Lines numbered as the caller sees them, blank lines at either end left out
    (Codex trims the whole text first); a CRLF patch reads as LF."""
    rows = [_Line(n, raw.removesuffix("\r")) for n, raw in enumerate(text.split("\n"), 1)]
    while rows and not rows[-1].marker:
        rows.pop()
    first = next((i for i, row in enumerate(rows) if row.marker), len(rows))
    return rows[first:]


def _body(lines: list[_Line]) -> list[_Line]:
    """The lines between `*** Begin Patch` and `*** End Patch`, a heredoc unwrapped."""
    if not lines:
        raise PatchParseError(1, f"the patch is empty; it must start with '{BEGIN}'")
    heredoc = _HEREDOC.match(lines[0].marker)
    if heredoc and len(lines) >= 2 and lines[-1].marker == heredoc.group(2):
        lines = lines[1:-1]
        if not lines:
            raise PatchParseError(1, f"the heredoc is empty; it must hold '{BEGIN}'")
    if lines[0].marker != BEGIN:
        raise PatchParseError(lines[0].number, f"the first line of the patch must be '{BEGIN}'")
    if len(lines) < 2 or lines[-1].marker != END:
        raise PatchParseError(lines[-1].number, f"the last line of the patch must be '{END}'")
    return lines[1:-1]


def _operation(body: Sequence[_Line], at: int) -> tuple[Operation, int]:
    head = body[at]
    found = _OPERATION.match(head.marker)
    if not found:
        raise PatchParseError(
            head.number,
            f"{head.marker!r} is not an operation; each starts with '*** Add File: PATH',"
            " '*** Delete File: PATH' or '*** Update File: PATH'",
        )
    kind, path = found.groups()
    if not path:
        raise PatchParseError(head.number, f"'*** {kind} File:' names no path")
    if kind == "Delete":
        return DeleteFile(path, head.number), at + 1
    if kind == "Add":
        return _add(body, at, path)
    return _update(body, at, path)


def _add(body: Sequence[_Line], at: int, path: str) -> tuple[AddFile, int]:
    """Every following "+" line is content; the first other line ends the file."""
    content: list[str] = []
    end = at + 1
    while end < len(body) and body[end].text.startswith("+"):
        content.append(body[end].text[1:] + "\n")
        end += 1
    return AddFile(path, "".join(content), body[at].number), end


def _update(body: Sequence[_Line], at: int, path: str) -> tuple[UpdateFile, int]:
    head = body[at]
    end = at + 1
    move_to = None
    if end < len(body) and body[end].marker.startswith(MOVE_TO):
        move_to = body[end].marker.removeprefix(MOVE_TO).strip()
        if not move_to:
            raise PatchParseError(body[end].number, f"'{MOVE_TO}' names no path")
        end += 1
    chunks: list[Chunk] = []
    while end < len(body):
        line = body[end]
        if not line.marker:
            end += 1  # blank lines may separate chunks
        elif line.text.lstrip().startswith("*"):
            break  # the next operation (or a stray marker, which it will refuse)
        elif chunks and not _is_header(line, at_start=True):
            raise PatchParseError(
                line.number, f"expected an '@@' line to start the next hunk, got {line.text!r}"
            )
        else:
            chunk, end = _chunk(body, end, first=not chunks)
            chunks.append(chunk)
    if not chunks and move_to is None:
        raise PatchParseError(head.number, f"the update of {path!r} has no hunk")
    return UpdateFile(path, move_to, tuple(chunks), head.number), end


def _is_header(line: _Line, at_start: bool) -> bool:
    """An `@@` line. Padded with whitespace only at a chunk's start: inside a chunk
    a line starting with a space is context, whatever follows."""
    text = line.text if not at_start else line.text.lstrip()
    return text == "@@" or text.startswith(("@@ ", "@@\t"))


def _chunk(body: Sequence[_Line], at: int, first: bool) -> tuple[Chunk, int]:
    start = body[at].number
    headers: list[str] = []
    end = at
    while end < len(body) and _is_header(body[end], at_start=True):
        header = body[end].marker[2:].strip()
        if header:
            headers.append(header)
        end += 1
    if end == at and not first:
        raise PatchParseError(start, "expected an '@@' line to start the hunk")
    rows: list[Row] = []
    end_of_file = False
    while end < len(body):
        line = body[end]
        if line.text.rstrip() == END_OF_FILE:
            end_of_file = True
            end += 1
            if not rows:
                raise PatchParseError(line.number, "the hunk has no lines before '*** End of File'")
            break
        if line.text and line.text[0] not in _ROW_KINDS:
            if not rows and not line.text.startswith("*"):
                raise PatchParseError(
                    line.number,
                    f"unexpected line {line.text!r} in a hunk: each line starts with"
                    " ' ' (context), '-' (removed) or '+' (added)",
                )
            break
        # an empty line is an empty context line (models drop the lone space)
        rows.append(Row(line.text[:1] or " ", line.text[1:]))
        end += 1
    if not rows:
        number = body[end].number if end < len(body) else body[-1].number + 1
        raise PatchParseError(number, "the hunk has no lines")
    return Chunk(tuple(headers), tuple(rows), end_of_file, start), end


# --- the Responses API's shape: one operation, its body without the envelope ----------------

OPERATION_TYPES = {"create_file": "Add", "update_file": "Update", "delete_file": "Delete"}


def operation_of(kind: str, path: str, diff: str | None, move_to: str | None = None) -> Operation:
    """One operation of the Responses API (`create_file` with a body of "+" lines,
    `update_file` with `@@` hunks, `delete_file` with none); `PatchParseError` names
    the 1-based line of `diff`. An update with `move_to` and no hunk is a rename."""
    head = _Line(0, f"*** {OPERATION_TYPES[kind]} File: {path}")
    body = [head, *_diff_lines(diff or "")]
    if kind == "delete_file":
        if len(body) > 1:
            raise PatchParseError(body[1].number, "delete_file takes no diff")
        return DeleteFile(path)
    if kind == "create_file":
        operation: Operation
        operation, end = _add(body, 0, path)
    elif len(body) == 1 and move_to:
        return UpdateFile(path, move_to, ())
    else:
        operation, end = _update(body, 0, path)
        operation = UpdateFile(path, move_to or None, operation.chunks)
    if end < len(body):
        line = body[end]
        what = "a line starting with '+'" if kind == "create_file" else "an '@@' hunk"
        raise PatchParseError(line.number, f"expected {what}, got {line.text!r}")
    return operation


def _diff_lines(diff: str) -> list[_Line]:
    """A body's lines, numbered from 1; a final newline ends the last line, no more."""
    rows = diff.removesuffix("\n").split("\n") if diff else []
    return [_Line(n, raw.removesuffix("\r")) for n, raw in enumerate(rows, 1)]


def render(operation: Operation) -> str:
    """The operation as envelope text (without Begin/End): what the journal records."""
    if isinstance(operation, DeleteFile):
        return f"*** Delete File: {operation.path}\n"
    if isinstance(operation, AddFile):
        lines = operation.content.removesuffix("\n").split("\n") if operation.content else []
        added = "".join(f"+{line}\n" for line in lines)
        return f"*** Add File: {operation.path}\n{added}"
    out = [f"*** Update File: {operation.path}\n"]
    if operation.move_to:
        out.append(f"{MOVE_TO} {operation.move_to}\n")
    for chunk in operation.chunks:
        out.extend(f"@@ {header}\n" for header in chunk.headers)
        if not chunk.headers:
            out.append("@@\n")
        out.extend(f"{row.kind}{row.text}\n" for row in chunk.rows)
        if chunk.end_of_file:
            out.append(f"{END_OF_FILE}\n")
    return "".join(out)
