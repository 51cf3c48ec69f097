"""The handler contract: what a handler is given and what it returns.

`context` (the read-only `Context`, the `Job` protocol of long work) and `outcome`
(`Outcome`, `Write`, `Link`, `Handler`). The room below `handlers/`, `writing/` and
`runtime/`: each of them imports it, it imports none of them (only the rooms a
`Context` holds: files, model, store).
"""
