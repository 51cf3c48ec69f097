"""`python -m daemon --workspace DIR`: run one workspace's daemon in the foreground.

Exit codes: 0 after a clean stop, 3 when another daemon already serves the
workspace (its pid is printed), 1 for any other failure to start.
"""

from __future__ import annotations

import argparse
import os
import sys

from daemon.journal import JournalError
from daemon.runfiles import AlreadyServed, ensure_private_dir
from daemon.server import Server, configure_logging
from daemon.workspace import DEFAULT_MAX_FILE_SIZE, Workspace

EXIT_ALREADY_SERVED = 3


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m daemon", description=__doc__)
    parser.add_argument("--workspace", default=os.environ.get("EDITJOURNAL_WORKSPACE", "."))
    parser.add_argument("--max-file-size", type=int, default=DEFAULT_MAX_FILE_SIZE)
    parser.add_argument("--log-stderr", action="store_true", help="also log to the terminal")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not os.path.isdir(args.workspace):
        print(f"editjournal: workspace {args.workspace!r} is not a directory", file=sys.stderr)
        return 1
    workspace = Workspace(args.workspace, max_file_size=args.max_file_size)
    configure_logging(ensure_private_dir(workspace.state_dir), args.log_stderr)
    try:
        server = Server(workspace)
    except AlreadyServed as e:
        print(f"editjournal: {e}", file=sys.stderr)
        return EXIT_ALREADY_SERVED
    except JournalError as e:
        print(f"editjournal: {e}", file=sys.stderr)
        return 1
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
