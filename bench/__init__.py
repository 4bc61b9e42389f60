"""tabwarden's bench, which measures the performance targets: see bench/README.md."""
