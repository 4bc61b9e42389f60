"""Tests for tabwarden.host, in process."""
