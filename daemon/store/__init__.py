"""The journal on disk: events, blobs, the chain anchor, state snapshots, keyed replies."""
