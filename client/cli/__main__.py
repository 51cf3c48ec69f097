"""`python -m editjournal.client.cli`: the `editjournal` command without its script.

The tests run the CLI so, and a hook a harness installed by module
(`PYTHON -m editjournal.client.cli hook HARNESS`, see `harness.hook_settings`).
"""

from __future__ import annotations

import sys

from editjournal.client.cli.app import main

sys.exit(main())
