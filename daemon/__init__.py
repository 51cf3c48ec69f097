"""The editjournal daemon: one per workspace, the only process that touches its files."""
