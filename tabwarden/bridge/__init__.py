"""Hop 2, the Unix-socket bridge between ``tabwarden mcp`` and the native host: who is at
the other end (peer credentials, attestation, client identity, admission), how frames
cross the socket, and the records the two ends leave each other (the host's last-seen
record, the spawner list). Shared by ``host`` and ``mcp_server``; imports neither, nor
the command line."""
