"""The process: the request loop, its boundary and limits, publishing, run files, logs, config."""
