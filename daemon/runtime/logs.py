"""Where the daemon's log lines go: daemon.log for everything, the terminal for people.

- `daemon.log` is written by a size-capped RotatingFileHandler (stdlib) on the *root*
  logger, so every library's records land there too: watchdog's own logger, Python
  warnings (`logging.captureWarnings`) and uncaught exceptions of threads. With a handler
  on the root, `logging.lastResort` never prints a library's WARNING to stderr.
- The terminal (`editjournal serve`, the daemon's `--log-stderr`) gets only our own
  logger, `editjournal`: INFO and up, plus the committed-event lines, which make `serve`
  a live view. A library never writes there: watchdog once printed a 70 KB
  RuntimeWarning into `make run`'s terminal during a `pip install` in the workspace.
- One line per request or event is DEBUG (logger `editjournal.events`): at the default
  level the file holds starts, stops and problems, not the traffic.

It only routes and formats; it never decides what is worth logging.
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass
from logging.handlers import RotatingFileHandler
from pathlib import Path

from editjournal.schemas.endpoint import LOG_FILE

LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING}
DEFAULT_MAX_BYTES = 10 * 1024 * 1024
BACKUPS = 3  # daemon.log.1 .. daemon.log.3: at most 4x the cap on disk
EVENTS = "editjournal.events"
# watchdog's RuntimeWarnings carry the repr of its whole watch table (70 KB seen):
# the file keeps their start, which names the warning and where it came from.
MAX_WARNING_CHARS = 2000
_FILE_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

log = logging.getLogger("editjournal")


@dataclass(frozen=True)
class LogSettings:
    """From the daemon's `--log-level`, `--log-max-bytes` and `--log-stderr`."""

    level: str = "info"  # a key of LEVELS: what daemon.log keeps of our own lines
    max_bytes: int = DEFAULT_MAX_BYTES  # 0: never rotate
    to_terminal: bool = False


class _NoFollowHandler(RotatingFileHandler):
    """The rotating log, never opened through a symlink planted at its name."""

    def _open(self):  # type: ignore[no-untyped-def]
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
        return open(os.open(self.baseFilename, flags, 0o600), "a", encoding=self.encoding)


def configure_logging(state_dir: Path, settings: LogSettings) -> None:
    """Route every log record of this process as the module docstring says."""
    level = LEVELS[settings.level]
    file_handler = _NoFollowHandler(
        state_dir / LOG_FILE, maxBytes=settings.max_bytes, backupCount=BACKUPS, encoding="utf-8"
    )
    file_handler.setFormatter(logging.Formatter(_FILE_FORMAT))
    root = logging.getLogger()
    root.addHandler(file_handler)
    root.setLevel(logging.WARNING)  # libraries: their warnings and errors, never their chatter
    log.setLevel(min(level, logging.INFO) if settings.to_terminal else level)
    # the event lines are needed by the file at DEBUG, and by the terminal always
    logging.getLogger(EVENTS).setLevel(logging.DEBUG if settings.to_terminal else level)
    file_handler.addFilter(_AtLeast(level))
    if settings.to_terminal:
        terminal = logging.StreamHandler()
        terminal.setFormatter(_TerminalFormatter())
        terminal.addFilter(_ForTerminal())
        log.addHandler(terminal)
    logging.captureWarnings(True)
    logging.getLogger("py.warnings").addFilter(_shorten)
    threading.excepthook = _log_thread_exception


class _AtLeast(logging.Filter):
    """The file's level for our own records; a library's records already passed the
    root logger's WARNING, whatever the file's level."""

    def __init__(self, level: int) -> None:
        super().__init__()
        self.level = level

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= self.level or not record.name.startswith(log.name)


class _ForTerminal(logging.Filter):
    """INFO and up, and the event lines (DEBUG in the file, the point of `serve`)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.INFO or record.name == EVENTS


class _TerminalFormatter(logging.Formatter):
    """`12:03:04 message`; a warning or an error also says which it is."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(message)s", "%H:%M:%S")
        self._loud = logging.Formatter("%(asctime)s %(levelname)s %(message)s", "%H:%M:%S")

    def format(self, record: logging.LogRecord) -> str:
        if record.levelno >= logging.WARNING:
            return self._loud.format(record)
        return super().format(record)


def _shorten(record: logging.LogRecord) -> bool:
    message = record.getMessage()
    if len(message) > MAX_WARNING_CHARS:
        cut = len(message) - MAX_WARNING_CHARS
        record.msg, record.args = f"{message[:MAX_WARNING_CHARS]}... [{cut} more chars]", None
    return True


def _log_thread_exception(args: threading.ExceptHookArgs) -> None:
    """A library thread that dies (watchdog's) is logged to the file, not printed; the
    daemon notices the dead observer itself and says so on our own logger."""
    if args.exc_type is SystemExit:
        return
    name = args.thread.name if args.thread is not None else "?"
    if args.exc_value is None:
        logging.getLogger("py.threads").error("thread %s died: %s", name, args.exc_type.__name__)
        return
    exc_info = (args.exc_type, args.exc_value, args.exc_traceback)
    logging.getLogger("py.threads").error("thread %s died", name, exc_info=exc_info)
