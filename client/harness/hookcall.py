"""What the hook works with: a harness's tool call, made harness-neutral (`Call`), the
files of a Codex patch (`PatchFile`), the kinds of call, and the hook's limits.

Shared by the hook (client/harness/hook.py), the harnesses' adapters (adapters.py),
the Codex patch reader (codexpatch.py) and the denials (denials.py).
"""

from __future__ import annotations

from typing import Any, NamedTuple

READ, EDIT, WRITE, SHELL, PROMPT = "read", "edit", "write", "shell", "prompt"
PATCH = "patch"  # Codex's apply_patch: files added, updated, moved, deleted
# the refusals a hook turns into a denial (the daemon's check_write sends no other)
DENIED = frozenset({"anchor_stale", "write_access_denied"})
REQUEST_TIMEOUT_S = 10.0  # one request to a serving daemon
START_TIMEOUT_S = 8.0  # starting a daemon when none serves (the harness waits on us)
REASON_LIMIT = 6000  # characters of a denial's reason: the model reads every one
PROJECT_ENV = ("CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR")  # set by the harnesses for hooks
# what parsing stdin can raise: invalid JSON or UTF-8 (ValueError), nesting deeper than
# the interpreter's recursion limit (json's decoder recurses), input beyond memory
PAYLOAD_ERRORS = (ValueError, RecursionError, MemoryError)
MAX_PROMPT = 1024 * 1024  # characters of a prompt's text sent (the schema takes no more)
WARNING_LIMIT = 500  # characters of the one line a warning takes on stderr
# how long a shell command's window stays open without its Post (the session died)
WINDOW_ENV, WINDOW_DEFAULT_S = "EDITJOURNAL_SHELL_WINDOW_S", 600.0


class HookProblem(Exception):
    """Why the hook could not judge the call: it is allowed, and this said on stderr
    (unless `quiet`: the session was told already, client/harness/unserved.py)."""

    def __init__(self, message: str, quiet: bool = False) -> None:
        super().__init__(message)
        self.quiet = quiet


class PatchFile(NamedTuple):
    """One file of a Codex apply_patch: what the patch does to it (`parse_patch`)."""

    action: str  # "add" | "update" | "delete"
    path: str  # as the patch names it (relative to the session's cwd, or absolute)
    move_to: str | None = None  # update: the name it ends up with
    edits: tuple[dict[str, Any], ...] = ()  # update: old_string, new_string, replace_all
    content: str | None = None  # add: the whole new file
    claimable: bool = True  # False: only a shell window can credit it

    @property
    def paths(self) -> tuple[str, ...]:
        return (self.path,) if self.move_to is None else (self.path, self.move_to)


class Call(NamedTuple):
    """One harness tool call, as the hook judges it (harness-neutral)."""

    harness: str
    event: str  # "before" | "after"
    tool: str  # the harness's own tool name (Edit, replace, ...): the journaled writer
    kind: str  # READ | EDIT | WRITE | SHELL | PROMPT | PATCH
    session: str
    cwd: str
    path: str  # as the harness gives it (absolute, or relative to cwd); SHELL: the cwd
    edits: tuple[dict[str, Any], ...] = ()  # EDIT: old_string, new_string, replace_all
    content: str | None = None  # WRITE: the whole new file; PROMPT: the prompt's text
    lines: tuple[int, int | None] | None = None  # READ: first and last line shown (None: all)
    command: str = ""  # SHELL: the command line
    window: str = ""  # SHELL: what pairs the before and the after (Claude Code: tool_use_id)
    patch: tuple[PatchFile, ...] = ()  # PATCH: its files (the patch's text is `command`)

    @property
    def agent(self) -> str:
        return f"{self.harness}:{self.session}"

    @property
    def writer(self) -> str:
        return f"{self.harness}:{self.tool}"


def positive_int(value: Any) -> int | None:
    """`value` when it is a positive int (a line number, a count) in a payload, else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None
