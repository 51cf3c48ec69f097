"""The stale-edit replay: real commits, two agents, every writing tool (see `run`)."""
