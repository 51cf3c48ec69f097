"""Journal strings made safe to print in a table: control characters shown, not obeyed.

Agent names, paths, kinds and summaries come from the journal, and the journal keeps
what it was sent: a journal written before the daemon refused such names (or a path
the filesystem allowed) can hold a newline, which would forge a whole row of `log`,
or an escape sequence, which would restyle or hide the rows after it. Every table in
client/views passes each journal string through `printable`, so one row stays one row
and what is shown is what is stored, spelt the way Python writes it (`a\\nb`).

Pure: text in, text out. `schemas.wire.is_control` is the one definition of a
control character, shared with the daemon's refusal of names.
"""

from __future__ import annotations

from editjournal.schemas.wire import is_control

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def printable(text: str, *, keep_tabs: bool = False) -> str:
    """`text` with each control character escaped (`\\n`, `\\x1b`, `\\u202e`); a tab
    kept with `keep_tabs` (a file's own lines, in `blame`, indent with them)."""
    if not any(is_control(c) for c in text):
        return text  # the common case: no copy
    return "".join(_escaped(c, keep_tabs) for c in text)


def _escaped(char: str, keep_tabs: bool) -> str:
    if not is_control(char) or (keep_tabs and char == "\t"):
        return char
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
