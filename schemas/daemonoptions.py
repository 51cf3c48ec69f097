"""The daemon's options, in one table: the daemon's argument parser
(`python -m editjournal.daemon`) and the CLI's `serve` / `start` options are both
built from it, so their names, kinds, defaults and help cannot drift apart
(`tests/unit/test_daemon_options.py` holds the daemon's own defaults to it).

Pure data: the daemon and the client each turn a row into their parser's terms.
`too_broad` is the one rule both sides apply before serving a directory: `/` and the
home directory itself are served only with `--allow-broad` (a daemon there would
watch and journal everything the user has).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from editjournal.schemas.units import format_binary_size

Kind = Literal["size", "count", "seconds", "choice", "flag", "pattern"]
LOG_LEVELS = ("debug", "info", "warning")
LOG_BACKUPS = 3  # daemon.log.1 .. daemon.log.3


@dataclass(frozen=True)
class DaemonOption:
    """One option: `--flag`, what kind of value it takes, its default and its help
    (the default is added to the help where there is one to show)."""

    flag: str
    kind: Kind
    default: Any
    help: str
    metavar: str | None = None
    choices: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """The attribute name parsers give it: `--max-file-size` -> `max_file_size`."""
        return self.flag.removeprefix("--").replace("-", "_")

    @property
    def shown_default(self) -> str | None:
        if self.kind in ("flag", "pattern"):
            return None
        if self.kind == "size":
            return format_binary_size(self.default)
        return f"{self.default:g}" if isinstance(self.default, float) else str(self.default)

    @property
    def full_help(self) -> str:
        shown = self.shown_default
        return self.help if shown is None else f"{self.help} (default {shown})."

    def argv(self, value: Any) -> list[str]:
        """The daemon's arguments for a value (None: not given, the daemon's default)."""
        if self.kind == "flag":
            return [self.flag] if value else []
        values = list(value or ()) if self.kind == "pattern" else [] if value is None else [value]
        return [arg for v in values for arg in (self.flag, str(v))]


DAEMON_OPTIONS: tuple[DaemonOption, ...] = (
    DaemonOption(
        "--max-file-size", "size", 8 * 1024 * 1024,
        "Largest file served: bytes or with a unit, e.g. 16MiB", "SIZE",
    ),
    DaemonOption("--max-file-lines", "count", 200_000, "Most lines a file served may have", "N"),
    DaemonOption("--no-watch", "flag", False, "Do not watch for outside changes."),
    DaemonOption(
        "--ignore", "pattern", (),
        "A gitignore-style pattern the watcher ignores (repeatable).", "PATTERN",
    ),
    DaemonOption(
        "--poll-interval", "seconds", 2.0,
        "Rescan interval while the kernel refuses to watch", "SECONDS",
    ),
    DaemonOption(
        "--watch-retry", "seconds", 30.0,
        "How often to try watching again after a refusal", "SECONDS",
    ),
    DaemonOption(
        "--allow-broad", "flag", False,
        "Serve even / or the home directory itself (refused otherwise: a daemon there"
        " would watch and journal everything under it).",
    ),
    DaemonOption(
        "--log-level", "choice", "info",
        "What daemon.log keeps of the daemon's own lines; debug adds one per event"
        " (libraries log their warnings and errors only)",
        choices=LOG_LEVELS,
    ),
    DaemonOption(
        "--log-max-bytes", "size", 10 * 1024 * 1024,
        f"daemon.log rotates past this size, keeping {LOG_BACKUPS} old files; 0 never rotates",
        "SIZE",
    ),
)  # fmt: skip


def too_broad(root: str, home: str | None) -> str | None:
    """What makes `root` too broad to serve without `--allow-broad` ("the file system's
    root", "the home directory"), or None. Both paths resolved by the caller (realpath):
    pure, so the daemon and the client judge alike."""
    if root == "/":
        return "the file system's root"
    if home and root == home:
        return "the home directory"
    return None


def too_broad_message(root: str, what: str) -> str:
    return (
        f"refusing to serve {root}, {what} itself: a daemon there would watch and journal"
        " everything under it"
    )
