"""The wheel holds the whole package: every module and every template of the source
tree, and each module imports from the wheel alone (a subpackage left out of the
package list, or a template out of the package data, fails here, not after a release)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tree_files() -> list[str]:
    """The package's modules and templates in the source tree, as paths in a wheel."""
    found = [*ROOT.glob("wikic/**/*.py"), *ROOT.glob("wikic/prompts/*.j2")]
    found += [*ROOT.glob("wikic/web/templates/*.html"), *ROOT.glob("wikic/web/assets/*")]  # the viewer's
    return sorted(p.relative_to(ROOT).as_posix() for p in found if "__pycache__" not in p.parts)


def test_every_package_folder_has_an_init() -> None:
    """A folder of modules without __init__.py still imports (as a namespace package), so
    only this notices one that git never took (a `build/` ignore pattern once hid wikic/build's)."""
    folders = {p.parent for p in ROOT.glob("wikic/**/*.py") if "__pycache__" not in p.parts}
    assert sorted(str(f.relative_to(ROOT)) for f in folders if not (f / "__init__.py").is_file()) == []


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel built from a copy of the checkout (building in place would leave build/ behind)."""
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    shutil.copytree(ROOT / "wikic", src / "wikic", ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path_factory.mktemp("dist")
    command = [
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--no-deps",
        "--no-build-isolation",
        "-q",
        "-w",
        str(out),
    ]
    proc = subprocess.run([*command, str(src)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    (built,) = out.glob("wikic-*.whl")
    return built


def test_the_wheel_holds_every_module_and_template(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
    expected = _tree_files()
    assert any(name.endswith(".j2") for name in expected)
    assert [name for name in expected if name not in names] == []


def test_every_module_and_the_templates_load_from_the_wheel(wheel: Path, tmp_path: Path) -> None:
    unzipped = tmp_path / "wheel"
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(unzipped)
    modules = [
        name.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        for name in _tree_files()
        if name.endswith(".py") and not name.endswith("__main__.py")  # that one runs the CLI
    ]
    # -I: no PYTHONPATH, no user site, no current folder; the wheel goes first on the path,
    # ahead of the editable install's finder, and every module must come from it.
    script = f"""
import importlib, json, sys
sys.path.insert(0, {str(unzipped)!r})
files = {{name: importlib.import_module(name).__file__ for name in {modules!r}}}
from wikic.prompts import PACKAGE_DIR
print(json.dumps({{"files": files, "templates": sorted(p.name for p in PACKAGE_DIR.glob("*.j2"))}}))
"""
    proc = subprocess.run(
        [sys.executable, "-I", "-c", script], capture_output=True, text=True, cwd=tmp_path, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = json.loads(proc.stdout)
    files: dict[str, str] = found["files"]
    assert sorted(files) == sorted(modules)
    outside = {name: file for name, file in files.items() if not Path(file).is_relative_to(unzipped)}
    assert outside == {}
    # The installed package finds its templates beside itself.
    assert found["templates"] == [Path(n).name for n in _tree_files() if n.endswith(".j2")]
