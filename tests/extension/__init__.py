"""The extension's Node tests and its type check, run from pytest."""
