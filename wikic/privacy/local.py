"""The local_only rule: which sources must never reach a remote backend, and whether
a model is remote (an API whose address is not loopback). Stdlib only."""

from __future__ import annotations

import fnmatch
import ipaddress
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from wikic.config import ModelConfig

DEFAULT_API_HOST = "api.openai.com"  # the openai backend without a base_url


def host_of(cfg: ModelConfig) -> str | None:
    """The host a model's requests go to; None for a model that runs in this process."""
    if cfg.backend != "openai":
        return None  # llama runs in-process; scripted never leaves it
    if not cfg.base_url:
        return DEFAULT_API_HOST
    return urlsplit(cfg.base_url).hostname or cfg.base_url


def is_loopback(host: str) -> bool:
    """localhost, 127.0.0.0/8 or ::1. Any other name is remote: names are not resolved,
    since a name that resolves to loopback today may not tomorrow."""
    if host.rstrip(".").lower() in ("localhost", "localhost.localdomain") or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def is_remote(cfg: ModelConfig) -> bool:
    host = host_of(cfg)
    return host is not None and not is_loopback(host)


class LocalOnly:
    """The `privacy.local_only` globs, matched against project-relative paths (sources/x.md)."""

    def __init__(self, globs: Iterable[str]) -> None:
        self.globs = [g.removeprefix("./").removeprefix("sources/") for g in globs]

    def __bool__(self) -> bool:
        return bool(self.globs)

    def covers(self, path: str) -> bool:
        """Whether a source (sources/x.md, or x.md under sources/) is local only."""
        rel = path.removeprefix("sources/")
        return any(_match(rel, g) for g in self.globs)

    def covers_any(self, paths: Iterable[Any]) -> bool:
        return any(isinstance(p, str) and self.covers(p) for p in paths)


def _match(rel: str, glob: str) -> bool:
    """A glob as sources.include reads one: ** spans folders, a bare name matches at any depth."""
    if fnmatch.fnmatchcase(rel, glob):
        return True
    if glob.startswith("**/") and fnmatch.fnmatchcase(rel, glob[3:]):
        return True
    if "/" not in glob and fnmatch.fnmatchcase(rel.rsplit("/", 1)[-1], glob):
        return True
    return glob.endswith("/**") and rel.startswith(glob[:-2])


def not_run_reason(cfg: ModelConfig) -> str:
    """Why a local-only source's digest did not run, and how to make it run."""
    return (
        f"is local only (privacy.local_only) and the model is remote ({host_of(cfg)}): it was not sent, "
        "and its pages are not built; set privacy.local_model (e.g. {backend: llama}) to build it locally"
    )
