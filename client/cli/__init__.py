"""The command line: `editjournal`, a thin layer over the library, built on click.

`app` holds the group and `main` (outcomes to exit codes); each other module holds
a family of commands (`daemons`, `tools`, `generated`, `audit`, `checkpoint`,
`undo`, `apply_patch`, `mcp`, `hook`, `hooks`, `fleet`) over what they share
(`common`: the global options, the client, JSON output; `help`: help texts).
`standpoint` turns the paths a person types into the wire's and back; `hints` puts
the daemon's suggestions in the CLI's words, commands runnable as printed, over the
group it is given (it imports no command module). Nothing outside this room imports
it but the console script (`client/entry.py`); `python -m editjournal.client.cli`
runs it too (`__main__`). The offline commands may import the daemon's read-only
journal code, lazily, inside the command (docs/architecture.md).
"""
