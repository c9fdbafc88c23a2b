"""`wikic ask`."""

from __future__ import annotations

import json
from typing import Any

import click

from wikic.cli.common import Ctx, guarded


@click.command()
@click.argument("question", nargs=-1, required=True)
@click.option("--save", is_flag=True, help="File the answer in wiki/ as a page of type answer.")
@click.option("--json", "as_json", is_flag=True, help="Print the answer and its figures as JSON on stdout.")
@click.option(
    "--no-cache", is_flag=True, help="Ask the model again even if this question was answered before."
)
@click.option(
    "--stale-ok", is_flag=True, help="Answer from the wiki as it is, even if sources changed since."
)
@click.option(
    "--no-wait", is_flag=True, help="--save: fail at once if another wikic process holds the project."
)
@click.option(
    "--quote",
    is_flag=True,
    default=None,
    help="Answer with the most relevant sentences of the pages themselves, each cited; no model call "
    "(schema.yaml: ask.mode: quote).",
)
@click.pass_obj
def ask(
    obj: Ctx,
    question: tuple[str, ...],
    save: bool,
    as_json: bool,
    no_cache: bool,
    stale_ok: bool,
    no_wait: bool,
    quote: bool | None,
) -> None:
    """Answer QUESTION from the compiled wiki, citing its pages as [[Page]].

    The wiki is the prompt's prefix; with the embedded model its state is saved in
    .wikic/prefix/, so later questions (in any process) only pay for their own tokens.
    A wiki larger than ask.budget is shown by the sentences that bear on the question;
    what ask reads of each page to rank them is kept in .wikic/state.db, so a question
    reads only the pages changed since the last one.

    \b
    Example: wikic ask "how does HNSW trade memory for speed?"
    """

    def run() -> int:
        from wikic.ask.runner import AskOptions
        from wikic.ask.runner import ask as run_ask

        project = obj.project()
        opts = AskOptions(
            save=save,
            use_cache=not no_cache,
            stale_ok=stale_ok,
            wait=not no_wait,
            on_wait=lambda text: click.echo(text, err=True),
            on_progress=lambda text: click.echo(text, err=True),
            quote=quote or None,
        )
        on_text = None if as_json else (lambda piece: click.echo(piece, nl=False))
        result = run_ask(project, " ".join(question), opts, on_text)
        if as_json:
            click.echo(json.dumps(result.to_json(), indent=2))
            return 0
        click.echo("")
        for line in _ask_notes(result):
            click.echo(line, err=True)
        return 0

    guarded(as_json, run)


def _ask_notes(result: Any) -> list[str]:
    notes = []
    if result.answer_cached:
        notes.append("(a stored answer from an earlier ask on this wiki; --no-cache asks the model again)")
    if result.pages:
        notes.append("cited: " + ", ".join(result.pages))
    if result.dropped_citations:
        notes.append(
            "dropped citations (no such page in the context): " + ", ".join(result.dropped_citations)
        )
    for sentence in result.unsupported:
        notes.append(f"UNSUPPORTED (no page shown says this): {sentence}")
    if result.sources_shown:
        notes.append("source lines shown: " + ", ".join(result.sources_shown))
    if result.mode == "quote":
        notes.append("(quoted from the pages: no model was asked)")
    elif not result.answer_cached:
        prefix = "restored" if result.prefix_cached else "evaluated"
        notes.append(
            f"prefix: {result.prefix_tokens} tokens ({prefix}), question: {result.question_tokens} "
            f"tokens, first token after {result.seconds['first_token']:.2f} s"
        )
    if result.saved:
        notes.append(f"saved: {result.saved} (run `wikic build` to list it in index.md)")
    return notes
