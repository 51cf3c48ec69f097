"""Outside changes: the observer, its intake on the daemon thread, ignore rules, own writes."""
