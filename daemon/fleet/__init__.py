"""The fleet: workspaces' journals shipped to PostgreSQL, and questions asked across them.

Never imported by the daemon's process: `editjournal ship` and `editjournal fleet`
run it, reading a journal read-only (its SQLite file) and writing to a PostgreSQL
server the project's own schema (`pgschema`). psycopg is the `fleet` extra's.
"""
