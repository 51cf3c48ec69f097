"""Finding the workspace, then probing and starting its daemon.

With no workspace named, the one meant is found as git finds its repository
(`discover`), so a command run in a subdirectory talks to the daemon of the
workspace around it instead of starting a second one nested inside. `/` and the
home directory itself are never served unless asked (`refuse_too_broad`).

libzmq's `connect` to a missing ipc path does not fail — messages just queue —
so the client probes the socket with a raw AF_UNIX connect first: ENOENT (no
file) or ECONNREFUSED (a stale file) both mean "nobody serves; start one".
Two clients may start daemons at once: the daemon's lock lets one win and the
other exits, and both clients then find the winner's endpoint.

The workspace is untrusted input, so the daemon is started so that nothing in
it can be imported in the daemon's place: `-E` makes the interpreter ignore
PYTHONPATH, PYTHONSTARTUP and the other PYTHON* variables, `-P` (3.11+)
keeps the working directory off `sys.path`, and the working directory is "/"
anyway, never the workspace (so `python -m` cannot pick up a workspace's
`daemon.py`, `msgspec.py` or `sitecustomize.py` on 3.10 either).
"""

from __future__ import annotations

import os
import shlex
import socket
import stat
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from editjournal.client.library.errors import (
    DaemonUnavailable,
    WorkspaceNotFound,
    WorkspaceTooBroad,
)
from editjournal.client.library.trust import Untrusted, check_socket, open_log, read_trusted
from editjournal.schemas.endpoint import (
    ENDPOINT_DECODER,
    ENDPOINT_FILE,
    LOG_FILE,
    REGISTRY_DIR,
    STATE_DIR_NAME,
    Endpoint,
    user_runtime_dir,
)
from editjournal.schemas.errors import ErrorCode

if TYPE_CHECKING:
    import subprocess

WORKSPACE_ENV = "EDITJOURNAL_WORKSPACE"
ALLOW_BROAD = "--allow-broad"  # the daemon's option (schemas.daemonoptions)
EXIT_ALREADY_SERVED = 3  # python -m editjournal.daemon: another daemon won the lock
DAEMON_MODULE = "editjournal.daemon"
DAEMON_CWD = "/"  # never the workspace: see the module docstring


@dataclass(frozen=True)
class WorkspaceChoice:
    """The workspace a command or client means, and why (said when a daemon is started)."""

    root: Path
    why: str


def choose_workspace(
    workspace: str | os.PathLike[str] | None = None, given_by: str = "as given"
) -> WorkspaceChoice:
    """`workspace` as given (no walking), else EDITJOURNAL_WORKSPACE's, else the one
    `discover` finds from the working directory."""
    if workspace:
        return WorkspaceChoice(Path(os.path.realpath(workspace)), given_by)
    if named := os.environ.get(WORKSPACE_ENV):
        return WorkspaceChoice(Path(os.path.realpath(named)), f"given by {WORKSPACE_ENV}")
    return discover(Path(os.path.realpath(".")))


def workspace_root(workspace: str | os.PathLike[str] | None) -> Path:
    return choose_workspace(workspace).root


def discover(start: Path) -> WorkspaceChoice:
    """As git finds its repository: from `start` up, the nearest directory with this
    user's `.editjournal/` (a workspace served before, or now), else the nearest git
    work tree's root (`.git`, a directory or a file), else `start` itself.

    Markers that are not this user's own are passed over (as git's safe.directory
    does): anyone may create `/tmp/.git`. `/` and the home directory are never found
    on the way up, unless a daemon serves them now (someone served one on purpose,
    with --allow-broad): a dotfiles repository in ~, or a `.editjournal/` left there,
    must not swallow every directory under it."""
    from editjournal.schemas.daemonoptions import too_broad  # not on a hook's path

    home = home_dir()
    above = [start, *start.parents]
    for directory in above:
        if _own(directory / STATE_DIR_NAME, directory=True) and (
            not too_broad(str(directory), home) or _serving(directory)
        ):
            return WorkspaceChoice(directory, f"found {STATE_DIR_NAME}/ in {directory}")
    for directory in above:
        if _own(directory / ".git") and not too_broad(str(directory), home):
            return WorkspaceChoice(directory, f"git work tree {directory}")
    return WorkspaceChoice(start, "the current directory")


def _own(path: Path, *, directory: bool = False) -> bool:
    """`path` exists, is this user's, and (when asked) is a directory, not a link to one."""
    try:
        found = path.lstat()
    except OSError:
        return False
    return found.st_uid == os.getuid() and (stat.S_ISDIR(found.st_mode) or not directory)


def _serving(root: Path) -> bool:
    try:
        return live_endpoint(root) is not None
    except Untrusted:
        return False


def home_dir() -> str | None:
    """The user's home directory, resolved (None when it cannot be told)."""
    home = os.path.expanduser("~")
    return os.path.realpath(home) if home != "~" else None


def refuse_too_broad(root: Path, options: Sequence[str] = ()) -> None:
    """`WorkspaceTooBroad` when `root` is / or the home directory itself and `options`
    (a daemon's) do not hold --allow-broad: checked before anything is created there."""
    from editjournal.schemas.daemonoptions import too_broad, too_broad_message

    what = too_broad(str(root), home_dir())
    if what is None or ALLOW_BROAD in options:
        return
    start = shlex.join(["editjournal", "start", "--workspace", str(root), ALLOW_BROAD])
    raise WorkspaceTooBroad(
        ErrorCode.WORKSPACE_TOO_BROAD.value,
        too_broad_message(str(root), what),
        {"workspace": str(root)},
        "run it in a project directory, or name one with --workspace DIR; to serve"
        f" {root} anyway: {start}",
    )


def require_workspace(root: Path) -> Path:
    """`root` itself, when it is a directory; nothing is ever created for a typo."""
    if not root.is_dir():
        what = "is not a directory" if root.exists() else "does not exist"
        raise WorkspaceNotFound.local(
            ErrorCode.WORKSPACE_NOT_FOUND, f"workspace {root} {what}", workspace=str(root)
        )
    return root


def interpreter_flags() -> list[str]:
    """Isolation flags for a daemon interpreter (see the module docstring)."""
    return ["-E", "-P"] if sys.version_info >= (3, 11) else ["-E"]


def daemon_command(root: Path, *options: str) -> list[str]:
    """The argv that runs the daemon of `root` (absolute) with `options`."""
    return [
        sys.executable,
        *interpreter_flags(),
        "-m",
        DAEMON_MODULE,
        "--workspace",
        str(root),
        *options,
    ]


def state_dir(root: Path) -> Path:
    return root / STATE_DIR_NAME


def read_endpoint(root: Path) -> Endpoint | None:
    """The endpoint file, when this user made it (`Untrusted` when someone else did)."""
    try:
        data = read_trusted(state_dir(root) / ENDPOINT_FILE)
        return ENDPOINT_DECODER.decode(data) if data is not None else None
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None


def is_listening(address: str) -> bool:
    """True when a process accepts connections on this ipc address."""
    if not address.startswith("ipc://"):
        return True  # tcp: nothing cheap to probe; let the request time out
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.setblocking(False)  # a blocking connect waits for ever on a full listen queue
    try:
        probe.connect(address.removeprefix("ipc://"))
    except BlockingIOError:
        return True  # listening, its queue full (a paused or swamped daemon): there
    except OSError:
        return False
    finally:
        probe.close()
    return True


def live_endpoint(root: Path) -> Endpoint | None:
    """The endpoint of a daemon that is actually serving, or None; `Untrusted` when the
    endpoint or its socket is not this user's own (client/library/trust.py)."""
    endpoint = read_endpoint(root)
    if endpoint is None or not is_listening(endpoint.socket):
        return None
    check_socket(endpoint.socket)
    return endpoint


def running_daemons(refused: list[Untrusted] | None = None) -> list[Endpoint]:
    """Every daemon of this user that is serving now, by workspace; registry entries of
    daemons that died without cleaning up are removed on the way. Entries (or a registry)
    that are not this user's own are skipped, and added to `refused`."""
    found = []
    registry = user_runtime_dir() / REGISTRY_DIR
    for entry in sorted(registry.glob("*.json")):
        try:
            data = read_trusted(entry)
            endpoint = ENDPOINT_DECODER.decode(data) if data is not None else None
            if endpoint is not None and is_listening(endpoint.socket):
                check_socket(endpoint.socket)
        except Untrusted as e:
            (refused if refused is not None else []).append(e)
            continue
        except (OSError, msgspec.DecodeError, msgspec.ValidationError):
            continue
        if endpoint is None:
            continue
        if is_listening(endpoint.socket):
            found.append(endpoint)
        else:
            entry.unlink(missing_ok=True)
    return sorted(found, key=lambda e: e.workspace)


def spawn_daemon(root: Path, options: Sequence[str] = ()) -> subprocess.Popen[bytes]:
    """Run the daemon with `--detach`; this process exits once the forked daemon serves."""
    import subprocess  # here: a harness hook loads this module on every tool call

    refuse_too_broad(require_workspace(root), options)
    directory = state_dir(root)
    directory.mkdir(mode=0o700, exist_ok=True)
    with os.fdopen(open_log(directory / LOG_FILE), "ab") as log:  # never through a link
        return subprocess.Popen(
            daemon_command(root, *options, "--detach"),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            cwd=DAEMON_CWD,
        )


def start_daemon(root: Path, timeout: float = 15.0, options: Sequence[str] = ()) -> Endpoint:
    """Start a daemon (or find the one that won the race) and wait until it serves."""
    import subprocess

    endpoint = live_endpoint(root)
    if endpoint:
        return endpoint
    proc = spawn_daemon(root, options)
    try:
        code = proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise _start_failed(root, f"the daemon was not serving after {timeout:g} s") from None
    if code not in (0, EXIT_ALREADY_SERVED):
        raise _start_failed(root, f"the daemon exited with code {code}")
    return _await_endpoint(root, time.monotonic() + timeout)


def _await_endpoint(root: Path, deadline: float) -> Endpoint:
    """A racing daemon that won the lock may still be binding: poll, bounded."""
    delay = 0.005
    while (endpoint := live_endpoint(root)) is None:
        if time.monotonic() > deadline:
            raise _start_failed(root, "the daemon holding the lock is not serving")
        time.sleep(delay)
        delay = min(delay * 2, 0.1)
    return endpoint


def _start_failed(root: Path, why: str) -> DaemonUnavailable:
    log_path = state_dir(root) / LOG_FILE
    tail = ""
    try:
        data = read_trusted(log_path) or b""
        tail = "".join(data.decode(errors="replace").splitlines(keepends=True)[-5:])
    except (OSError, Untrusted):  # a log that is not ours is not shown
        pass
    return DaemonUnavailable.local(
        ErrorCode.DAEMON_UNAVAILABLE,
        f"could not start a daemon for {root}: {why}; see {log_path}",
        workspace=str(root),
        log_tail=tail,
    )
