"""What a build imports ahead, while its model calls are in flight (once a first wave of them
has come back: before, the CPU makes the client and sends the calls): the CPU idles then, and
after the last call every import is on the build's critical path (the closing lint's
duplicate-page check loads numpy: 0.1-0.2 s after a -j 64 build's last answer)."""

from __future__ import annotations

import contextlib
import importlib

# third-party alone: a wikic module imported in a thread of its own while the build imports
# others could meet it halfway through a circular import
MODULES = ("numpy",)


def imports() -> None:
    """Import MODULES, quietly: a module that cannot be imported here is imported again where
    it is needed, and fails there with its own error."""
    for name in MODULES:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
