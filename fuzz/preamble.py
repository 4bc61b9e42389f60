"""What every Python harness in fuzz/ opens and closes with, written once: atheris when it is
installed, its coverage instrumentation around the harness's imports of the code under test (only
when the harness runs as a script under atheris), and the libFuzzer entry point (the harness's
``main``). Without atheris the harness logic is plain Python: ``python -m fuzz.run``'s fallback
and pytest call ``test_one_input`` directly.

It must never import the code under test itself: an import made here would escape the harness's
instrumented block.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from typing import Any

try:
    import atheris  # type: ignore[import-untyped]  # no stubs: types-atheris is not installed
except ImportError:  # the harness logic still runs under fuzz.run's fallback and pytest
    atheris = None

__all__ = ["atheris", "instrumented", "run_libfuzzer"]


def instrumented(name: str) -> contextlib.AbstractContextManager[Any]:
    """Around a harness's imports of the code under test (``name``: the harness's
    ``__name__``): ``atheris.instrument_imports()`` when it runs as a script with atheris
    installed, so libFuzzer sees coverage there; otherwise nothing."""
    if atheris is not None and name == "__main__":
        instrument: contextlib.AbstractContextManager[Any] = atheris.instrument_imports()
        return instrument
    return contextlib.nullcontext()


def run_libfuzzer(test_one_input: Callable[[bytes], None]) -> None:
    """A harness's ``main``: libFuzzer over ``test_one_input`` with the script's arguments."""
    if atheris is None:
        sys.exit("atheris is not installed; use `python -m fuzz.run` for the fallback fuzzer")
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
