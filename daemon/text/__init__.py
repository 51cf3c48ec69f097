"""The pure text engine: line splitting, rendering and content-hash anchors.

Everything in this package is a pure function of its arguments so that it can be
tested exhaustively and reused by every handler. It must never do I/O, read the
clock, or import daemon state.
"""
