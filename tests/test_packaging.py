"""Packaging: the wheel ships every rule, grammar and template file and ``py.typed``, and an
installed wheel serves them through ``importlib.resources`` with the source tree's contents.

The wheel is built from a copy of the project so the build leaves nothing in the working tree.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
import venv
import zipfile
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

from project_copy import copy_project

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 120  # seconds per subprocess: a hang fails the test instead of stalling the run

# (package that serves the files, folder in the source tree, file pattern)
RESOURCE_DIRS = [
    ("choicebox.rules", ROOT / "rules", "*.yaml"),
    ("choicebox.grammars", ROOT / "grammars", "*.lark"),
    ("choicebox.prompt_templates", ROOT / "sdk" / "choicebox" / "prompt_templates", "*.yaml"),
    ("choicebox.audit", ROOT / "sdk" / "choicebox" / "audit", "*.yaml"),
    ("choicebox.judge", ROOT / "sdk" / "choicebox" / "judge", "*.txt"),
]


def _source_resources() -> dict[str, str]:
    """``package/file name`` -> text, for every data file the wheel must ship."""
    found = {
        f"{package}/{path.name}": path.read_text(encoding="utf-8")
        for package, folder, pattern in RESOURCE_DIRS
        for path in sorted(folder.glob(pattern))
    }
    # The templates always exist, so the comparison below can never pass on empty lists.
    assert {
        "choicebox.prompt_templates/answer_colon.yaml",
        "choicebox.prompt_templates/answer_is.yaml",
        "choicebox.prompt_templates/boxed_letter.yaml",
        "choicebox.judge/prompt.txt",
    } <= set(found)
    return found


def _run(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """Run ``command``; on failure the assertion shows its output."""
    result = subprocess.run(
        command, check=False, capture_output=True, text=True, timeout=TIMEOUT, **kwargs
    )
    expected = 0
    assert expected == result.returncode, f"{command[:4]} failed:\n{result.stdout}\n{result.stderr}"
    return result


def _archive_name(resource: str) -> str:
    package, name = resource.split("/")
    return package.replace(".", "/") + "/" + name


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("build")
    project = copy_project(work / "project")
    out = work / "dist"
    _run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), "."],
        cwd=project,
    )
    (built,) = out.glob("choicebox-*.whl")
    return built


def test_wheel_contains_every_data_file_and_py_typed(wheel: Path) -> None:
    expected = {_archive_name(r) for r in _source_resources()} | {"choicebox/py.typed"}
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        expected_missing: list[str] = []
        assert expected_missing == sorted(expected - names)
        for resource, text in _source_resources().items():
            assert text == archive.read(_archive_name(resource)).decode("utf-8"), resource


CHECK = """
import importlib.resources, json, sys
import choicebox
from choicebox import templates  # before `choicebox.templates` the data package is imported
wanted = json.loads(sys.argv[1])
out = {"module": choicebox.__file__, "files": {}, "listed": {}}
for resource in wanted:
    package, name = resource.split("/")
    out["files"][resource] = importlib.resources.files(package).joinpath(name).read_text("utf-8")
for package in {r.split("/")[0] for r in wanted}:
    out["listed"][package] = sorted(
        f.name for f in importlib.resources.files(package).iterdir()
        if f.is_file() and f.name.endswith((".yaml", ".lark", ".txt"))
    )
out["py_typed"] = importlib.resources.files("choicebox").joinpath("py.typed").is_file()
out["templates"] = sorted(templates())
print(json.dumps(out))
"""


def test_installed_wheel_serves_the_source_files(wheel: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    # The wheel's dependencies come from the environment running the tests. `system_site_packages`
    # would show the base interpreter's instead when the tests run in a virtual environment, so
    # the running one's site-packages is appended as a plain path: its .pth files (the editable
    # install's finder among them) are not processed, and the wheel's own copy comes first.
    inner = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"])
    Path(inner.stdout.strip(), "outer.pth").write_text(sysconfig.get_path("purelib") + "\n")
    subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            str(wheel),
        ],
        check=True,
        capture_output=True,
        timeout=TIMEOUT,
        env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )
    expected = _source_resources()
    cwd = tmp_path / "elsewhere"  # not the source tree, so `sdk/` cannot leak onto sys.path
    cwd.mkdir()
    clean_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    result = _run([str(python), "-c", CHECK, json.dumps(sorted(expected))], cwd=cwd, env=clean_env)
    found = json.loads(result.stdout)
    assert Path(found["module"]).is_relative_to(env_dir), found["module"]
    assert expected == found["files"]
    expected_listed = {
        package: sorted(r.split("/")[1] for r in expected if r.startswith(package + "/"))
        for package in found["listed"]
    }
    assert expected_listed == found["listed"]
    assert found["py_typed"] is True
    expected_templates = sorted(
        p.stem for p in (ROOT / "sdk" / "choicebox" / "prompt_templates").glob("*.yaml")
    )
    assert expected_templates == found["templates"]


def test_the_changelog_names_a_version_and_date_per_release() -> None:
    """Keep a Changelog: an ``Unreleased`` section on top, then ``[X.Y.Z] - YYYY-MM-DD`` per
    release, newest first, with the package's version among them and only the standard kinds of
    change under each."""
    text = (Path(__file__).parents[1] / "CHANGELOG.md").read_text(encoding="utf-8")
    releases = re.findall(r"^## \[(.+?)\](?: - (\d{4}-\d{2}-\d{2}))?$", text, flags=re.MULTILINE)
    assert releases[0] == ("Unreleased", "")
    dated = releases[1:]
    assert dated, "no release"
    assert all(re.fullmatch(r"\d+\.\d+\.\d+", number) and date for number, date in dated)
    assert [date for _, date in dated] == sorted((date for _, date in dated), reverse=True)
    assert version("choicebox") in {number for number, _ in dated}
    kinds = set(re.findall(r"^### (.+)$", text, flags=re.MULTILINE))
    assert kinds <= {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}
