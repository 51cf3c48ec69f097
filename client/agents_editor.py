"""The documented import path of the OpenAI Agents SDK editor (docs/harnesses.md).

It lives in the harness room, `client/harness/agents_editor.py`; this module keeps
`from editjournal.client.agents_editor import DaemonEditor` working, as the docs and
the `agents` extra name it. Nothing of its own.
"""

from __future__ import annotations

from editjournal.client.harness.agents_editor import DaemonEditor

__all__ = ["DaemonEditor"]
