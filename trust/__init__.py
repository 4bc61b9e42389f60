"""tabwarden.trust — the trust record every enforcement point re-reads (issue 3 builds it out).

For now it owns only where the record lives: the per-user config directory.
"""
