"""tabwarden's bench (issue 16): see bench/README.md."""
