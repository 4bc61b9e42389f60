"""Tests for tabwarden (the CLI package: commands, ceremonies, attestation, peer checks)."""
