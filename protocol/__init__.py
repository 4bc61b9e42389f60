"""tabwarden.protocol — the sans-IO core both ends share.

Nothing here opens a socket, reads a clock or draws randomness: bytes go in, events come out, and
nonces and time are arguments. ``nativemsg`` is hop 3's framing (Chrome <-> host), ``frames`` and
``handshake`` are hop 2's (mcp_server <-> host). See docs/protocol.md.
"""
