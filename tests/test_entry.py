"""The start-up of `wikic`: the entry point (cli/entry.py) runs `wikic build` with its own
flags without click and prints what the click command prints, any other command line goes
to click; the config models skip pydantic's plugin lookup and leave its setting as it was."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from projects import make_project

from wikic.cli.entry import quick_build
from wikic.cli.main import cli


def wikic(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wikic", *args], cwd=cwd, capture_output=True, text=True, env=os.environ.copy()
    )


@pytest.mark.parametrize(
    ("argv", "parsed"),
    [
        (["build"], (None, {})),
        (["build", "-q", "--json", "--strict"], (None, {"quiet": True, "as_json": True, "strict": True})),
        (
            ["build", "--quiet", "--no-wait", "--explain"],
            (None, {"quiet": True, "no_wait": True, "explain": True}),
        ),
        (
            ["build", "--force", "--dry-run", "--offline"],
            (None, {"force": True, "dry_run": True, "offline": True}),
        ),
        (
            ["build", "--retry-failed", "--batch", "--wait"],
            (None, {"retry_failed": True, "batch": True, "batch_wait": True}),
        ),
        (["build", "-j", "8"], (None, {"jobs": 8})),
        (["build", "-j64", "--jobs", "2", "--jobs=3"], (None, {"jobs": 3})),
    ],
)
def test_the_build_command_lines_it_runs_itself(argv: list[str], parsed: tuple[object, object]) -> None:
    assert quick_build(argv) == parsed


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["--help"],
        ["-V"],
        ["lint"],
        ["build", "--help"],
        ["build", "-h"],
        ["build", "--unknown"],
        ["build", "extra"],
        ["build", "-qj4"],
        ["build", "-j"],
        ["build", "-j", "0"],
        ["build", "-j", "65"],
        ["build", "--jobs=x"],
        ["build", "-j", "٣"],  # a digit to str.isdigit, not to click
        ["-C"],
        ["-C", "build"],
        ["build", "-C", "."],
        ["--", "build"],
    ],
)
def test_every_other_command_line_goes_to_click(argv: list[str]) -> None:
    assert quick_build(argv) is None


def test_a_c_folder_is_taken_only_when_it_is_one(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    assert quick_build(["-C", str(tmp_path), "build", "-q"]) == (tmp_path, {"quiet": True})
    assert quick_build(["-C", str(tmp_path / "file"), "build"]) is None  # click says why
    assert quick_build(["-C", str(tmp_path / "missing"), "build"]) is None


def test_the_quick_path_prints_what_click_prints(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    first = wikic("build", "--json", "-q", cwd=project.root)  # the full build, through the quick path
    assert first.returncode == 0, first.stderr
    assert not json.loads(first.stdout)["nothing_to_do"]
    for args in (["--json", "-q"], ["--json"], [], ["--strict"], ["-q"]):
        quick = wikic("-C", str(project.root), "build", *args, cwd=tmp_path)
        slow = CliRunner().invoke(cli, ["-C", str(project.root), "build", *args], catch_exceptions=False)
        assert quick.returncode == slow.exit_code == 0
        if "--json" in args:
            fast_report, click_report = json.loads(quick.stdout), json.loads(slow.stdout)
            assert fast_report.pop("seconds") >= 0 and click_report.pop("seconds") >= 0
            assert fast_report == click_report and fast_report["nothing_to_do"]
        else:
            assert quick.stdout == slow.stdout == ""
        strip = [ln.split(" (")[0] for ln in quick.stderr.splitlines()]  # the seconds differ
        assert strip == [ln.split(" (")[0] for ln in slow.stderr.splitlines()]


def test_a_no_op_build_loads_neither_click_nor_dataclasses(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    assert wikic("build", "-q", cwd=project.root).returncode == 0
    code = (
        "import sys\n"
        f"sys.argv = ['wikic', '-C', {str(project.root)!r}, 'build', '--json', '-q']\n"
        "from wikic.cli.entry import main\n"
        "try:\n    main()\nexcept SystemExit as e:\n    assert e.code == 0, e.code\n"
        "heavy = ('click', 'dataclasses', 'pydantic', 'jinja2', 'wikic.build.report', 'wikic.state.store')\n"
        "print(sorted(m for m in heavy if m in sys.modules), file=sys.stderr)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout)["nothing_to_do"]
    assert out.stderr.strip() == "[]"


def test_click_still_reports_what_the_quick_path_leaves_to_it(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    bad = wikic("build", "-j", "0", cwd=project.root)
    assert bad.returncode == 2 and "-j" in bad.stderr and "Traceback" not in bad.stderr
    (tmp_path / "file").write_text("x")
    not_a_folder = wikic("-C", str(tmp_path / "file"), "build", cwd=tmp_path)
    assert not_a_folder.returncode == 2 and "Traceback" not in not_a_folder.stderr
    (tmp_path / "q").mkdir()
    nowhere = wikic("build", "-q", cwd=tmp_path / "q")  # no schema.yaml: the quick path's own error
    assert nowhere.returncode == 2 and "no schema.yaml" in nowhere.stderr


@pytest.mark.parametrize("setting", [None, "some-plugin"])
def test_the_config_models_leave_pydantics_plugin_setting_as_it_was(setting: str | None) -> None:
    """wikic's models are built with pydantic's plugin lookup off (it reads every installed
    distribution's entry points); the variable is the user's again once they are built."""
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    if setting is not None:
        env["PYDANTIC_DISABLE_PLUGINS"] = setting
    code = (
        "import os\n"
        "from wikic.config import parse_schema\n"
        "assert parse_schema('title: T\\n').title == 'T'\n"
        "print(os.environ.get('PYDANTIC_DISABLE_PLUGINS'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.strip() == str(setting)


@pytest.mark.parametrize("quick", [False, True], ids=["click", "quick build"])
def test_every_command_line_leaves_without_the_final_collection(
    quick: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The entry point, not only click's commands, skips the interpreter's last collection:
    python -m wikic and the console script both come through it (0.4-0.6 s after a build)."""
    import atexit
    import gc

    from wikic.cli import entry

    registered: list[object] = []
    monkeypatch.setattr(atexit, "register", registered.append)
    # a folder with no project: the quick path's build says so and exits, as click's --version does
    argv = ["-C", str(tmp_path), "build"] if quick else ["--version"]
    assert (entry.quick_build(argv) is not None) == quick
    monkeypatch.setattr(sys, "argv", ["wikic", *argv])
    with pytest.raises(SystemExit):
        entry.main()
    assert registered == [gc.freeze]
