"""The baseline: a bare ZeroMQ ROUTER that echoes each frame — same transport,
same process boundary, none of the daemon's work."""

from __future__ import annotations

import sys

import zmq


def main(address: str) -> None:
    ctx = zmq.Context()
    router = ctx.socket(zmq.ROUTER)
    router.bind(address)
    print("ready", flush=True)
    while True:
        frames = router.recv_multipart()
        if frames[-1] == b"stop":
            break
        router.send_multipart(frames)
    router.close()
    ctx.term()


if __name__ == "__main__":
    main(sys.argv[1])
