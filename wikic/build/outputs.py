"""The files an assembly makes (assemble.py), by name in wiki/, each page's text made only
when publish takes it (publish.py): a full build's pages are held as their bodies alone, and
each body is let go as its page is written, not held twice over (bodies, then texts) until
the last page is rendered (100,000 pages: a fifth of a full build's peak)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

TAKEN = "taken by publish: its text is made once"


class Outputs(Mapping[str, str]):
    """Each file's text, or how to make it. `take` makes it and forgets how: a taken file is
    still named (`in`, iteration, len) but its text is gone (KeyError)."""

    def __init__(self) -> None:
        self._made: dict[str, Callable[[], str] | str | None] = {}

    def put(self, name: str, text: str | Callable[[], str]) -> None:
        self._made[name] = text

    def __getitem__(self, name: str) -> str:
        made = self._made[name]
        if made is None:
            raise KeyError(f"{name}: {TAKEN}")
        return made if isinstance(made, str) else made()

    def take(self, name: str) -> str:
        """The file's text, made now; what it was made from is let go."""
        text = self[name]
        self._made[name] = None
        return text

    def __contains__(self, name: object) -> bool:
        return name in self._made

    def __iter__(self) -> Iterator[str]:
        return iter(self._made)

    def __len__(self) -> int:
        return len(self._made)


def take(outputs: Mapping[str, str], name: str) -> str:
    """`name`'s text, let go where `outputs` can (Outputs), else as it is."""
    return outputs.take(name) if isinstance(outputs, Outputs) else outputs[name]
