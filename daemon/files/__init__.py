"""Every byte of the workspace: confined access, encodings, the caches of parsed contents."""
