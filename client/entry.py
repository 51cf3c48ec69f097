"""The `editjournal` console script: the hook lean, everything else through the CLI.

A harness runs `editjournal hook HARNESS` around every tool call, so that one path
must not import the CLI framework (click) or the typed client: it is dispatched
here, before anything else is loaded (client/harness/hook.py). Every other command is
`editjournal.client.cli.app.main`.
"""

from __future__ import annotations

import os
import sys


def main() -> int:
    # `hook --help` is a person asking: the CLI shows the command's help. Anything
    # else stays on the lean path, which allows the call whatever it was given (a
    # usage error's exit 2 would be a denial to Claude Code)
    if sys.argv[1:2] == ["hook"] and sys.argv[2:3] not in (["--help"], ["-h"]):
        from editjournal.client.harness.hook import main as hook

        code = hook(sys.argv[2:])
        # the answer is written: skip the interpreter's teardown (modules, the ZeroMQ
        # context), a few milliseconds of every tool call the harness waits for
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    from editjournal.client.cli.app import main as cli

    return cli()


if __name__ == "__main__":
    sys.exit(main())
