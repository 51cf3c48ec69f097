"""The contract between agents and the daemon: wire envelopes, tool params and
results, journal events and the error catalogue.

Pure msgspec Structs and enums. This package must never do I/O and imports
nothing but msgspec and the standard library, so clients can depend on it
without pulling in the daemon.
"""

from editjournal.schemas.wire import PROTOCOL_VERSION as PROTOCOL_VERSION  # one source
