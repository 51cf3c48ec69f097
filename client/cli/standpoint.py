"""Where a person stands in the workspace: the CLI's one rule for paths, both ways.

A relative PATH a person types is relative to where they stand, as git and every
shell tool read it: `cd ws/pkg && editjournal read m.py` reads `pkg/m.py`. Standing
outside the workspace (one named with --workspace or EDITJOURNAL_WORKSPACE), there
is nowhere inside to start from, so a path starts at the workspace's root — as git
reads paths with --work-tree from outside it. The daemon speaks workspace-relative
paths only (the wire's); `Standpoint` turns a typed path into the wire's
(`to_wire`) and every path the CLI prints back into the typed form (`shown`: `m.py`,
`../lib/x.py`), so whatever is printed — a table, a message, a suggested command —
can be typed again from the same place. `--json` and `call` print the wire's paths
untouched (machine output): only the human rendering goes through here.

Pure: paths in, paths and text out (the current directory and the root are given).
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

Say = Callable[[str, set[str]], str]  # prose, the paths it may name -> prose as shown

# Keys whose text values (or lists of texts) are workspace paths, wherever they sit in
# a reply, its details or an event: what `shown` rewrites and `in_text` looks for.
PATH_KEYS = frozenset(
    {"path", "paths", "file_path", "moved_from", "moved_to", "files", "absent", "scope"}
    | {"kept_new", "unchanged"}  # a restore's lists of paths
)
# Keys whose text is prose that may name those paths (never a file's content, a diff).
TEXT_KEYS = frozenset({"message", "summary", "detail"})
# Bulk a walk need not enter: file contents, diffs, rows of lines.
_SKIPPED = frozenset({"content", "diff", "delta", "rendered", "lines", "text", "blobs"})
# What may stand next to a path in prose without being part of it.
_BEFORE = r"(?<![\w./~-])"
_AFTER = r"(?![\w/~-]|\.[\w])"


@dataclass(frozen=True)
class Standpoint:
    """`base`: the workspace-relative directory relative paths start from ("" when
    that is the root: the person stands there, or outside the workspace)."""

    root: Path
    base: str = ""

    @classmethod
    def at(cls, root: Path, cwd: Path) -> Standpoint:
        """Where `cwd` stands in the workspace at `root` (both resolved)."""
        rel = os.path.relpath(cwd, root)
        inside = rel != ".." and not rel.startswith("../") and not os.path.isabs(rel)
        return cls(root, rel if inside and rel != "." else "")

    def to_wire(self, typed: str) -> str:
        """A typed path as the daemon takes it. One leaving the workspace goes on
        absolute: the daemon refuses it and says why. An absolute one goes as typed."""
        if not self.base or os.path.isabs(typed):
            return typed
        full = posixpath.normpath(posixpath.join(self.base, typed))
        if full == ".." or full.startswith("../"):
            return os.path.normpath(self.root / full)
        return full + "/" if typed.endswith("/") and full != "." else full  # keep what is refused

    def shown(self, wire: str) -> str:
        """A workspace path as it is typed from here (`../x` when it is not below)."""
        if not self.base or not wire:
            return wire
        if os.path.isabs(wire):  # (a path the daemon refused as outside: as it was given)
            return wire
        shown = posixpath.relpath(posixpath.normpath(wire), self.base)
        return shown + "/" if wire.endswith("/") and shown != "." else shown

    def in_text(self, text: str, paths: Iterable[str]) -> str:
        """`text` with each of `paths` it names (as a whole path, not part of a longer
        one) as `shown` gives it: in one pass, so a rewritten path is never rewritten
        again."""
        moved = {p: self.shown(p) for p in set(paths) if p and self.shown(p) != p}
        if not moved or not text:
            return text
        names = "|".join(re.escape(p) for p in sorted(moved, key=len, reverse=True))
        found = re.compile(f"{_BEFORE}(?:{names}){_AFTER}")
        return found.sub(lambda m: moved[m.group(0)], text)

    def localized(self, value: Any, say: Say | None = None) -> Any:
        """`value` (a reply, a log entry: a Struct, or builtins) with every path field
        `shown`, and its prose put by `say(text, paths)` (the paths it may name; by
        default `in_text`); the same type back."""
        if not self.base:  # no path moves: only the reply's own message is put (cheap)
            return value if say is None else _with_message(value, say)
        plain = msgspec.to_builtins(value)
        known = set(paths_in(plain))
        moved = self._localized(plain, known, say or self.in_text)
        if isinstance(value, msgspec.Struct):
            return msgspec.convert(moved, type(value))
        return moved

    def _localized(self, value: Any, known: set[str], say: Say, key: str = "") -> Any:
        if key in _SKIPPED:
            return value
        if key in PATH_KEYS and isinstance(value, str):
            return self.shown(value)
        if key in TEXT_KEYS and isinstance(value, str):
            return say(value, known)
        if isinstance(value, dict):
            return {k: self._localized(v, known, say, k) for k, v in value.items()}
        if isinstance(value, list):
            return [self._localized(v, known, say, key) for v in value]
        return value


def _with_message(value: Any, say: Say) -> Any:
    """`value` with its top-level `message` put by `say` (a blame of 100,000 lines is
    not walked for it)."""
    message = value.get("message") if isinstance(value, dict) else getattr(value, "message", None)
    if not isinstance(message, str) or not message:
        return value
    said = say(message, set(paths_in(value)))
    if isinstance(value, dict):
        return {**value, "message": said}
    return msgspec.structs.replace(value, message=said)


def paths_in(value: Any, key: str = "") -> Iterator[str]:
    """Every workspace path a reply, its details or an event names in its path fields
    (builtins or Structs, at any depth)."""
    if isinstance(value, msgspec.Struct):
        value = msgspec.to_builtins(value)
    if key in _SKIPPED:
        return
    if key in PATH_KEYS and isinstance(value, str) and value:
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from paths_in(v, k)
    elif isinstance(value, list):
        for v in value:
            yield from paths_in(v, key)
