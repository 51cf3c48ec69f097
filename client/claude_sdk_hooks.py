"""The documented import path of the Claude Agent SDK hook callbacks (docs/harnesses.md).

They live in the harness room, `client/harness/claude_sdk_hooks.py`; this module
keeps `from editjournal.client.claude_sdk_hooks import hook_matchers` working, as
the docs and the `claude` extra name it. Nothing of its own.
"""

from __future__ import annotations

from editjournal.client.harness.claude_sdk_hooks import (
    AGENT_PREFIX,
    READS_AND_WRITES,
    WRITES,
    callback,
    hook_matchers,
)

__all__ = ["AGENT_PREFIX", "READS_AND_WRITES", "WRITES", "callback", "hook_matchers"]
