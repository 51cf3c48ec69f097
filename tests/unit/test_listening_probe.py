"""`is_listening` answers at once, whatever the listener does: a daemon that is paused
(SIGSTOP) or swamped stops accepting, its listen queue fills, and a blocking connect to
it waited for ever, past every client timeout."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

from editjournal.client.library.connection import is_listening


def test_a_listener_whose_queue_is_full_is_listening_and_the_probe_does_not_wait(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(0)  # never accepts: as a stopped daemon
    queued: list[socket.socket] = []
    try:
        while True:  # fill its queue
            extra = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            extra.setblocking(False)
            try:
                extra.connect(str(path))
            except BlockingIOError:
                extra.close()
                break
            queued.append(extra)
        answers: list[bool] = []
        probe = threading.Thread(target=lambda: answers.append(is_listening(f"ipc://{path}")))
        probe.start()
        probe.join(10)
        assert answers == [True], "the probe blocked on a full listen queue"
    finally:
        for extra in queued:
            extra.close()
        listener.close()


def test_no_listener_is_not_listening(tmp_path: Path) -> None:
    assert not is_listening(f"ipc://{tmp_path / 'nothing'}")
    bound = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    bound.bind(str(tmp_path / "bound"))  # bound, not listening: refused
    try:
        assert not is_listening(f"ipc://{tmp_path / 'bound'}")
    finally:
        bound.close()
