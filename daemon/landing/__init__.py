"""A committed write reaching the disk: group-committed rounds, the last look and
exchange, recovery of writes a crash interrupted."""
