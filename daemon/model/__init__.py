"""The journal folded: the daemon's state, its prepared hunks and checkpoints."""
