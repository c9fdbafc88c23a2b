"""A slow disk for the wikic processes a fault test starts: with this folder on
PYTHONPATH and WIKIC_TEST_SLOW_RENAME=SECONDS, every rename takes that long, so
that a kill can land between the renames of one publish (which takes a
millisecond on a fast disk)."""

import os
import time

_delay = float(os.environ.get("WIKIC_TEST_SLOW_RENAME") or 0)
if _delay > 0:
    _replace = os.replace

    def _slow_replace(src, dst, **kwargs):  # type: ignore[no-untyped-def]
        time.sleep(_delay)
        return _replace(src, dst, **kwargs)

    os.replace = _slow_replace
