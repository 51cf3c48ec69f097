"""Processes forked from an interpreter that has already imported editjournal.

Most of the suite's time went into starting interpreters: a daemon spends ~0.4 s of
CPU importing its modules before it serves anything and ~0.2 s after, a CLI call
~0.2 s before it does anything, and the suite starts a thousand daemons and more
CLI calls (on two cores, 83% of the suite's CPU was those children). So each test
worker keeps a zygote: an interpreter started with the daemon's (or the command
line's) flags that imports every module once and then only forks. A child is the
real program in its own process: its own pid, its own sockets, `main()` run from
`runpy` exactly as `python -m MODULE ARGS` runs it, with the test's environment,
working directory and descriptors; the zygote reaps it and reports its exit status.

What a fork cannot give is a fresh interpreter, so the exec path keeps its own
tests: `spawn(..., prefix=...)` and `spawn(..., fork=False)`, clients' auto-start,
`editjournal start` (a forked CLI still execs the daemon it starts), the isolation and
install suites all exec the real command, and `EDITJOURNAL_TEST_EXEC=1 make test`
runs the whole suite that way. A daemon child
writes the command a real start would have into its `/proc/PID/cmdline` (the
zygote's argument area, padded for it), so `stop` and `list` recognise it as they
recognise a real one (`client/library/trust.py: is_our_daemon`).

The server half runs as a script under the daemon's isolation flags (`-E -P`), so it
imports only the standard library and editjournal, never `tests`.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import gc
import importlib
import json
import os
import pkgutil
import select
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

OFF_SWITCH = "EDITJOURNAL_TEST_EXEC"  # set to 1: every process is exec'd, none forked
PAD = 16_384  # bytes of argument area a child may write its command into
MESSAGE_MAX = 1 << 20


# --- the test's side -------------------------------------------------------------


class ForkedProcess:
    """What the tests use of `subprocess.Popen`, for a child of the zygote: the test
    is not its parent, so exit statuses come from the zygote, and waiting is done on
    a pidfd (readable once the process has ended) the zygote opened before the pid
    could be reused."""

    def __init__(self, zygote: Zygote, pid: int, pidfd: int, args: list[str]) -> None:
        self.zygote, self.pid, self.pidfd, self.args = zygote, pid, pidfd, args
        self.returncode: int | None = None
        self.stdin: IO[Any] | None = None
        self.stdout: IO[Any] | None = None
        self.stderr: IO[Any] | None = None

    def poll(self) -> int | None:
        if self.returncode is None and _readable(self.pidfd, 0):
            self.returncode = self.zygote.exit_status(self.pid)
            os.close(self.pidfd)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None and not _readable(self.pidfd, timeout):
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        code = self.poll()
        assert code is not None
        return code

    def communicate(self, timeout: float | None = None) -> tuple[bytes | None, bytes | None]:
        """Its stdout and stderr (when they are pipes) to the end, then its exit."""
        streams = [s for s in (self.stdout, self.stderr) if s is not None]
        fds = [s.fileno() for s in streams]
        read = dict(zip(streams, _drain(fds, self, timeout, kill=False), strict=True))
        for stream in streams:
            stream.close()
        self.wait(timeout)
        return tuple(read.get(s) if s is not None else None for s in (self.stdout, self.stderr))  # type: ignore[return-value]

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            signal.pidfd_send_signal(self.pidfd, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def _readable(fd: int, timeout: float | None) -> bool:
    return bool(select.select([fd], [], [], timeout)[0])


class Zygote:
    """One zygote process (per test worker, set of interpreter flags and of modules imported)."""

    def __init__(self, flags: Sequence[str], preload: Sequence[str]) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.socket, self.lock = ours, threading.Lock()
        self.proc = subprocess.Popen(
            [sys.executable, *flags, __file__, str(theirs.fileno()), *preload, "#" * PAD],
            pass_fds=[theirs.fileno()],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            cwd="/",
        )
        theirs.close()

    def spawn(
        self,
        module: str,
        args: Sequence[str],
        command: Sequence[str],
        cwd: str,
        env: Mapping[str, str],
        fds: list[int],
    ) -> ForkedProcess | None:
        """`python -m MODULE ARGS` in a child with `fds` as its stdin, stdout and stderr,
        shown in /proc as `command`; None when the zygote cannot (the caller execs)."""
        request = {"module": module, "args": list(args), "command": list(command)}
        request |= {"cwd": cwd, "env": dict(env)}
        reply, pidfds = self._ask(request, fds)
        if "pid" not in reply:
            return None
        return ForkedProcess(self, reply["pid"], pidfds[0], list(command))

    def exit_status(self, pid: int) -> int:
        reply, _ = self._ask({"status": pid}, [])
        return int(reply["code"])

    def _ask(self, request: dict[str, Any], fds: list[int]) -> tuple[dict[str, Any], list[int]]:
        with self.lock:
            socket.send_fds(self.socket, [json.dumps(request).encode()], fds)
            data, got, _, _ = socket.recv_fds(self.socket, MESSAGE_MAX, 1)
        if not data:
            raise RuntimeError("the zygote ended")
        return json.loads(data), got

    def close(self) -> None:
        self.socket.close()
        self.proc.wait(30)


_zygotes: dict[tuple[str, ...], Zygote | None] = {}


def zygote(flags: Sequence[str], preload: Sequence[str]) -> Zygote | None:
    """This worker's zygote for `flags`, started on first use; None when turned off."""
    if os.environ.get(OFF_SWITCH) == "1" or not _pidfds():
        return None
    key = (*flags, "|", *preload)  # one per set of flags and of modules imported
    if key not in _zygotes:
        _zygotes[key] = Zygote(flags, preload)
    return _zygotes[key]


def close_all() -> None:
    """End this worker's zygotes and wait for them (their children's CPU is then
    counted in the worker's, as an exec'd child's would be)."""
    while _zygotes:
        found = _zygotes.popitem()[1]
        if found is not None:
            found.close()


def _pidfds() -> bool:
    """Whether this system has what a child of another process is waited on with."""
    return hasattr(os, "pidfd_open") and hasattr(signal, "pidfd_send_signal")


def forked(
    flags: Sequence[str],
    preload: Sequence[str],
    module: str,
    args: Sequence[str],
    cwd: str,
    stdin: int,
    stdout: int,
    stderr: int,
    env: Mapping[str, str] | None = None,
) -> ForkedProcess | None:
    """`python FLAGS -m MODULE ARGS` forked from this worker's zygote, its standard
    streams the descriptors given (the caller keeps and closes its own copies), in
    `env` (this process's environment when None)."""
    found = zygote(flags, preload)
    if found is None:
        return None
    command = [sys.executable, *flags, "-m", module, *args]
    fds = [stdin, stdout, stderr]
    return found.spawn(module, args, command, cwd, os.environ if env is None else env, fds)


def run(
    flags: Sequence[str],
    preload: Sequence[str],
    module: str,
    args: Sequence[str],
    *,
    stdin: str | None,
    env: Mapping[str, str],
    cwd: str,
    timeout: float,
) -> subprocess.CompletedProcess[str] | None:
    """`subprocess.run(..., input=stdin, capture_output=True, text=True)` for a forked
    child; None when the zygote cannot (the caller execs). A child outliving `timeout`
    is killed and `subprocess.TimeoutExpired` raised, as `subprocess.run` does."""
    in_r, in_w = os.pipe() if stdin is not None else (os.open(os.devnull, os.O_RDONLY), -1)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        proc = forked(flags, preload, module, args, cwd, in_r, out_w, err_w, env)
    finally:
        for fd in (in_r, out_w, err_w):
            os.close(fd)
    if proc is None:
        for fd in (in_w, out_r, err_r):
            if fd >= 0:
                os.close(fd)
        return None
    feeder = None
    if stdin is not None:
        feeder = threading.Thread(target=_feed, args=(in_w, stdin.encode()), daemon=True)
        feeder.start()
    try:
        out, err = _drain([out_r, err_r], proc, timeout)
    finally:
        os.close(out_r)
        os.close(err_r)
    if feeder is not None:
        feeder.join(timeout)
    return subprocess.CompletedProcess(
        [sys.executable, *flags, "-m", module, *args],
        proc.wait(timeout),
        out.decode(errors="replace"),
        err.decode(errors="replace"),
    )


def _feed(fd: int, data: bytes) -> None:
    """Write the child's stdin and close it (a child that stops reading early: fine)."""
    try:
        with open(fd, "wb") as pipe:
            pipe.write(data)
    except BrokenPipeError:
        pass


def _drain(
    fds: list[int], proc: ForkedProcess, timeout: float | None, kill: bool = True
) -> list[bytes]:
    """Everything written to `fds` until each is closed; past `timeout`
    `subprocess.TimeoutExpired` is raised, the child killed first if `kill` (as
    `subprocess.run` does; `Popen.communicate` leaves it running). The caller closes
    the descriptors."""
    chunks: dict[int, list[bytes]] = {fd: [] for fd in fds}
    deadline = None if timeout is None else time.monotonic() + timeout
    open_fds = list(fds)
    while open_fds:
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            if kill:
                proc.kill()
            raise subprocess.TimeoutExpired(proc.args, timeout or 0)
        for fd in select.select(open_fds, [], [], left)[0]:
            data = os.read(fd, 65536)
            if data:
                chunks[fd].append(data)
            else:
                open_fds.remove(fd)
    return [b"".join(chunks[fd]) for fd in fds]


# --- the zygote's side -----------------------------------------------------------


def serve(control: socket.socket, preload: Sequence[str]) -> None:
    """Import, then fork a child per request and report exit statuses until the test
    worker closes its end."""
    skip = tuple(name[1:] for name in preload if name.startswith("!"))
    for name in preload:
        if not name.startswith("!"):
            _preload(name, skip)
    gc.collect()
    gc.freeze()  # children do not copy pages for the collector's sake
    codes: dict[int, int] = {}
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    while True:
        ready = select.select([control, wake_r], [], [])[0]
        if wake_r in ready:
            os.read(wake_r, 4096)
            _reap(codes)
        if control in ready:
            data, fds, _, _ = socket.recv_fds(control, MESSAGE_MAX, 3)
            if not data:
                return
            request = json.loads(data)
            if "status" in request:
                pid = request["status"]
                if pid not in codes:
                    _reap(codes, pid)
                socket.send_fds(control, [json.dumps({"code": codes.pop(pid)}).encode()], [])
                continue
            child = _fork(request, fds, [control, wake_r, wake_w])
            for fd in fds:
                os.close(fd)
            if child is None:
                control.send(b"{}")
                continue
            pidfd = os.pidfd_open(child)
            socket.send_fds(control, [json.dumps({"pid": child}).encode()], [pidfd])
            os.close(pidfd)


def _preload(name: str, skip: tuple[str, ...]) -> None:
    """Import `name`; `package.*`: every module below it that imports (one needing an
    extra that is not installed is left to import when used, as it would), except
    those named in `skip` and below them."""
    if not name.endswith(".*"):
        importlib.import_module(name)
        return
    package = name.removesuffix(".*")
    root = importlib.import_module(package)
    for info in pkgutil.walk_packages(root.__path__, package + "."):
        if not info.name.endswith("__main__") and not info.name.startswith(skip):
            with contextlib.suppress(Exception):
                importlib.import_module(info.name)


def _reap(codes: dict[int, int], pid: int = -1) -> None:
    """Collect ended children (`pid` alone, waiting for it, when given)."""
    while True:
        try:
            found, status = os.waitpid(pid, 0 if pid > 0 else os.WNOHANG)
        except ChildProcessError:
            return
        if found == 0:
            return
        codes[found] = os.waitstatus_to_exitcode(status)
        if pid > 0:
            return


def _fork(request: dict[str, Any], fds: list[int], close: list[Any]) -> int | None:
    """The child's pid, or None when its command does not fit the argument area."""
    command = b"".join(os.fsencode(word) + b"\0" for word in request["command"])
    area = _argument_area()
    if area is None or len(command) > area[1] - area[0]:
        return None
    pid = os.fork()
    if pid:
        return pid
    try:
        size = area[1] - area[0]
        ctypes.memmove(area[0], command.ljust(size, b"\0"), size)
        _become_child(request, fds, close)
    finally:
        os._exit(1)  # only reached if becoming the child itself failed


def _argument_area() -> tuple[int, int] | None:
    """Where this process's command line lives (/proc/self/stat fields 48 and 49)."""
    try:
        stat = Path("/proc/self/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    return int(fields[45]), int(fields[46])


def _become_child(request: dict[str, Any], fds: list[int], close: list[Any]) -> None:
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    for item in close:
        item.close() if isinstance(item, socket.socket) else os.close(item)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    time.tzset()  # TZ as the test's environment says, as a fresh interpreter reads it
    sys.argv = ["-m", *request["args"]]
    code = _run(request["module"])
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def _run(module: str) -> int:
    """`runpy` the module as `python -m` would; its exit code as the interpreter's."""
    import runpy

    # preloaded for its imports; `python -m` runs it fresh, as `__main__` (runpy warns
    # when it finds it already imported): a package's `__main__`, or the module itself
    found = sys.modules.get(module)
    sys.modules.pop(f"{module}.__main__" if hasattr(found, "__path__") else module, None)
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        code: object = 0
    except SystemExit as stop:
        code = stop.code
    except BaseException:
        traceback.print_exc()
        code = 1
    atexit._run_exitfuncs()
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


if __name__ == "__main__":
    if sys.path and sys.path[0] == os.path.dirname(os.path.abspath(__file__)):
        del sys.path[0]  # run without -P: the tests' directory is no program's path
    with socket.socket(fileno=int(sys.argv[1])) as own:
        serve(own, sys.argv[2:-1])
