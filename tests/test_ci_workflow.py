"""docs/ci.md's GitHub Actions workflow, run here step by step (SPEC §7).

Every ``run:`` step of the shard and merge jobs runs as printed, in a directory
per job, with a specimen as $TARGET and the quick profile. What GitHub's own
actions do is done by hand: ``upload-artifact``/``download-artifact`` copy the
partials from the shard jobs to the merge job, ``cache/restore``/``cache/save``
copy the corpus between runs; the install step is left out (the environment
running this test has rollcert). Two workflow runs with different seeds: the
second must report the first one's findings from the corpus."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CI_PAGE = ROOT / "docs" / "ci.md"


def _workflow() -> str:
    found = re.search(r"```yaml\n(name: rollcert\n.*?)```", CI_PAGE.read_text(encoding="utf-8"), re.DOTALL)
    assert found, "docs/ci.md has no workflow"
    return found.group(1)


def _steps(workflow: str, job: str) -> list[str]:
    """The job's steps, in order: a ``run:`` line's command, or ``uses:`` and the action."""
    body = re.search(rf"^  {job}:\n(.*?)(?=^  \S|\Z)", workflow, re.DOTALL | re.MULTILINE)
    assert body, f"no job {job!r}"
    steps = []
    for line in body.group(1).splitlines():
        stripped = line.strip().removeprefix("- ")
        if stripped.startswith("run: "):
            steps.append(stripped.removeprefix("run: "))
        elif stripped.startswith("uses: "):
            steps.append("uses: " + stripped.removeprefix("uses: ").split("@")[0])
    return steps


def _environment(workflow: str, **overrides: str) -> dict[str, str]:
    block = re.search(r"^env:\n((?:  .*\n)+)", workflow, re.MULTILINE)
    assert block
    names = re.findall(r"^  ([A-Z_]+):", block.group(1), re.MULTILINE)
    assert set(overrides) == set(names)  # every variable the steps read is given here
    bin_directory = str(Path(sys.executable).parent)
    return {**os.environ, "PATH": bin_directory + os.pathsep + os.environ["PATH"], **overrides}


def _run_step(step: str, directory: Path, environment: dict[str, str], **matrix: str) -> int:
    for name, value in matrix.items():
        step = step.replace("${{ matrix." + name + " }}", value)
    assert "${{" not in step, step  # nothing left for GitHub to fill in
    completed = subprocess.run(["bash", "-c", step], cwd=directory, env=environment, capture_output=True, text=True,
                               timeout=900)
    (directory / "log.txt").open("a").write(f"$ {step}\n{completed.stdout}{completed.stderr}\n")
    return completed.returncode


#: The workflow's $TARGET: first_match_scan declaring only the core calls and depth, so
#: that a whole certification is R0 and R2 (both violated) and the rest not assessed —
#: seconds, where all eleven properties of the specimen took over ten minutes for the
#: test's two workflow runs (shards, merges and corpus are what is tested here, not search).
CORE_ONLY_TARGET = """
from dataclasses import replace

from rollcert.specimens import load_all
from rollcert.targets.adapter import Capability

_SPECIMEN = load_all()["first_match_scan"].target
TARGET = replace(_SPECIMEN, name="first_match_scan, core only",
                 capabilities=frozenset({Capability.CORE, Capability.DEPTH}))
"""


def _workflow_run(tmp_path: Path, number: int, seed: str, cache: Path) -> dict[str, object]:
    workflow = _workflow()
    modules = tmp_path / "modules"
    modules.mkdir(exist_ok=True)
    (modules / "core_only.py").write_text(CORE_ONLY_TARGET)
    environment = _environment(workflow, TARGET="core_only:TARGET", PROFILE="quick", SEED=seed)
    environment["PYTHONPATH"] = str(modules)
    environment["GITHUB_RUN_ID"] = str(number)
    partials = []
    for shard in ("1", "2", "3"):
        job = tmp_path / f"run-{number}" / f"shard-{shard}"
        job.mkdir(parents=True)
        for step in _steps(workflow, "shard"):
            if step == "uses: actions/cache/restore" and cache.exists():
                shutil.copytree(cache, job / ".rollcert" / "corpus")
            elif step == "uses: actions/upload-artifact":
                partials.append(job / f"partial-{shard}.json")
            elif not step.startswith("uses: ") and "pip install" not in step:
                assert _run_step(step, job, environment, shard=shard) == 0, (job / "log.txt").read_text()
    job = tmp_path / f"run-{number}" / "merge"
    job.mkdir()
    environment["GITHUB_STEP_SUMMARY"] = str(job / "summary.md")
    statuses = []
    for step in _steps(workflow, "merge"):
        if step == "uses: actions/download-artifact":
            for partial in partials:
                shutil.copy(partial, job)
        elif step == "uses: actions/cache/restore" and cache.exists():
            shutil.copytree(cache, job / ".rollcert" / "corpus")
        elif step == "uses: actions/cache/save":
            shutil.rmtree(cache, ignore_errors=True)
            shutil.copytree(job / ".rollcert" / "corpus", cache)
        elif not step.startswith("uses: ") and "pip install" not in step:
            statuses.append(_run_step(step, job, environment))
    assert statuses == [1, 0], (job / "log.txt").read_text()  # the merge is the gate: violated; the summary step runs
    assert "rollcert certificate" in (job / "summary.md").read_text()
    certificate: dict[str, object] = json.loads((job / "certificate.json").read_text())
    return certificate


@pytest.mark.slow
def test_the_documented_workflow_runs_and_its_corpus_carries_findings_to_the_next_run(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = _workflow_run(tmp_path, 1, "0", cache)
    properties = first["properties"]
    assert isinstance(properties, dict)
    assert properties["R2"]["verdict"] == "violated"
    assert first["corpus"]["added"] >= 1 and len(list(cache.glob("*.json"))) == first["corpus"]["added"]
    second = _workflow_run(tmp_path, 2, "auto", cache)  # the nightly seed: another one
    assert second["seed"] != first["seed"] and second["seed_source"] == "--seed auto, from $GITHUB_RUN_ID=2"
    assert second["properties"]["R2"]["reason"].startswith("from the corpus")
    assert second["corpus"]["failed"] >= 1


def test_the_readme_points_to_the_ci_page() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "docs/ci.md" in readme
    assert "rollcert merge" in CI_PAGE.read_text(encoding="utf-8")


def _recipe(heading: str, language: str) -> list[str]:
    """The ``language`` code blocks of the docs/ci.md section ``heading``."""
    page = CI_PAGE.read_text(encoding="utf-8")
    section = re.search(rf"^### {re.escape(heading)}\n(.*?)(?=^#{{2,3}} |\Z)", page, re.DOTALL | re.MULTILINE)
    assert section, f"docs/ci.md has no section {heading!r}"
    return re.findall(rf"```{language}\n(.*?)```", section.group(1), re.DOTALL)


def _recipe_commands(heading: str) -> list[str]:
    (block,) = _recipe(heading, "sh")
    return [line for line in block.splitlines() if line.startswith("rollcert ")]


#: The recipes certify a whole target; here one property of a specimen, so that a run takes seconds.
ONE_PROPERTY = " --only R3"


def _run_recipe(command: str, directory: Path, **variables: str) -> dict[str, object]:
    environment = {**os.environ, "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"],
                   "TARGET": "specimen:fifo_replay", "PROFILE": "quick", **variables}
    completed = subprocess.run(["bash", "-c", command + ONE_PROPERTY], cwd=directory, env=environment,
                               capture_output=True, text=True, timeout=300)
    assert completed.returncode == 1, completed.stdout + completed.stderr  # violated
    certificate: dict[str, object] = json.loads((directory / "certificate.json").read_text())
    return certificate


@pytest.mark.slow
def test_the_redis_recipe_carries_a_finding_to_a_run_with_another_seed(tmp_path: Path) -> None:
    from test_corpus_database import redis_server

    certify, campaign = _recipe_commands("The Redis recipe")
    assert "--corpus \"$ROLLCERT_CORPUS\"" in certify and "--corpus \"$ROLLCERT_CORPUS\"" in campaign
    with redis_server(tmp_path) as url:
        first, second = tmp_path / "one", tmp_path / "two"
        first.mkdir()
        second.mkdir()
        found = _run_recipe(certify, first, SEED="0", ROLLCERT_CORPUS=url)
        assert found["corpus"]["added"] >= 1
        again = _run_recipe(certify, second, SEED="7", ROLLCERT_CORPUS=url)
    assert again["properties"]["R3"]["reason"].startswith("from the corpus")
    assert again["corpus"]["failed"] >= 1


@pytest.mark.slow
def test_the_github_artifact_recipe_carries_a_finding_from_the_main_branch_to_a_pull_request(tmp_path: Path) -> None:
    import datetime
    import zipfile

    (module,) = _recipe("The GitHub-artifact recipe", "python")
    main, pull_request = _recipe_commands("The GitHub-artifact recipe")
    branch, other = tmp_path / "main", tmp_path / "pull-request"
    for job in (branch, other):
        job.mkdir()
        (job / "rollcert_corpus.py").write_text(module)
    found = _run_recipe(main, branch, SEED="0", PYTHONPATH=str(branch))
    assert found["corpus"]["added"] >= 1
    # What actions/upload-artifact uploads and GitHubArtifactDatabase downloads: the directory, zipped,
    # in Hypothesis's cache of artifacts (a fresh download is not fetched again: no network here).
    stamp = datetime.datetime.now(datetime.UTC).isoformat().replace(":", "_")
    cache = other / ".hypothesis" / "github-artifacts" / "rollcert-corpus"
    cache.mkdir(parents=True)
    examples = branch / ".rollcert" / "examples"
    with zipfile.ZipFile(cache / f"{stamp}.zip", "w") as artifact:
        for path in examples.rglob("*"):
            artifact.write(path, path.relative_to(examples))
    again = _run_recipe(pull_request, other, SEED="7", PYTHONPATH=str(other))
    assert again["properties"]["R3"]["reason"].startswith("from the corpus")
    assert not (other / ".rollcert" / "examples").exists() or not any((other / ".rollcert" / "examples").rglob("*.*"))
