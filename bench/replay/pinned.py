"""A daemon of one commit, for "before" figures while the working tree moves on.

The editable install maps `editjournal.*` to the working tree, which others edit
while a replay runs (a daemon fix half written gives figures of nothing). With
`--daemon-commit REV` the replay serves its workspace with the daemon, schemas
and client of that commit instead: `git archive` writes the commit's tree to a
temporary directory once, and the daemon process starts with the editable
finder's mapping pointed there before anything of editjournal is imported.
The benchmark's own process (its client) stays on the working tree: the wire
protocol is what the two share. Nothing here touches the working tree.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from bench.daemons import DAEMON_CWD, Daemon, serving
from editjournal.client.library.connection import DAEMON_MODULE, interpreter_flags

REPO = Path(__file__).resolve().parents[2]
PARTS = {"editjournal": "editjournal", "editjournal.client": "client",
         "editjournal.daemon": "daemon", "editjournal.schemas": "schemas"}  # fmt: skip
_LAUNCH = (
    "import sys, runpy\n"
    "for name in list(sys.modules):\n"
    "    if name.startswith('__editable__') and hasattr(sys.modules[name], 'MAPPING'):\n"
    "        sys.modules[name].MAPPING.update({mapping!r})\n"
    "runpy.run_module({module!r}, run_name='__main__', alter_sys=True)\n"
)

Serve = Callable[[Path], AbstractContextManager[object]]


def export(commit: str) -> tuple[str, Path]:
    """The commit's full sha and a directory holding its tree (made once per sha)."""
    sha = _git("rev-parse", "--verify", f"{commit}^{{commit}}").strip()
    tree = Path(tempfile.gettempdir()) / f"ej-pinned-{sha[:12]}"
    if not (tree / "daemon").is_dir():
        tree.mkdir(exist_ok=True)
        archive = subprocess.run(["git", "-C", str(REPO), "archive", sha], capture_output=True,
                                 check=True).stdout  # fmt: skip
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return sha, tree


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, check=True,
                          text=True).stdout  # fmt: skip


def server(tree: Path | None) -> Serve:
    """How a replay serves its workspace: the working tree's daemon, or `tree`'s."""
    if tree is None:
        return serving
    return lambda root: _serving_tree(root, tree)


@contextmanager
def _serving_tree(root: Path, tree: Path) -> Iterator[Daemon]:
    mapping = {name: str(tree / part) for name, part in PARTS.items()}
    code = _LAUNCH.format(mapping=mapping, module=DAEMON_MODULE)
    errors = tempfile.TemporaryFile()  # noqa: SIM115 - closed by Daemon.stop
    argv = [sys.executable, *interpreter_flags(), "-c", code, "--workspace", str(root)]
    proc = subprocess.Popen(argv, cwd=DAEMON_CWD, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=errors)  # fmt: skip
    daemon = Daemon(root, proc, errors)
    try:
        daemon.wait_serving()
        yield daemon
    finally:
        daemon.stop()
