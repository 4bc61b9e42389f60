"""Order statistics for the bench's samples. Pure: numbers in, numbers out; no clock, no I/O."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence


def median(samples: Sequence[float]) -> float | None:
    return statistics.median(samples) if samples else None


def percentile(samples: Sequence[float], p: float) -> float | None:
    """The nearest-rank percentile (p in 0..100): a value that was actually measured."""
    if not samples:
        return None
    ordered = sorted(samples)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]
