"""Every measured number in README.md says where it comes from.

A block of README (a paragraph, a list item's paragraph, a table together with the
paragraph that introduces it, or a console-output code block together with the
paragraph right after it) that holds a measured number
— a decimal, a percentage, a ratio such as ``1.18x``, a time such as ``11 minutes`` or
an Elo difference — must name its source inside the block: a commit the number was
measured at (backticked, and a commit of this repository), or a section of a page of
``docs/`` (``docs/results.md, "The demo"``: the page exists and has that heading),
which holds the command and commit (a heading may go on after a colon: "The demo" names
"The demo: a diverse team of 3 ..."). Numbers that are settings (``λ = 0.7``,
``--override=run.seed=11``), versions and code are not measurements.

The test reads README as a person does, so a number added without its source fails
here, naming the line.
"""

import pathlib
import re
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
README = ROOT / "README.md"

# What a measurement looks like in prose: 0.80, 57%, 1.18x, 11 minutes, +163 Elo.
_MEASURED = re.compile(
    r"(?<![\w.=/-])(?:"
    r"[+−-]?\d+\.\d+(?:x\b)?"  # a decimal or a decimal ratio
    r"|\d+(?:\.\d+)? ?%"  # a percentage
    r"|\d+x\b"  # a whole ratio (not 5x5: no boundary after the x)
    r"|\d+(?:\.\d+)? (?:minutes?|min|seconds|hours?)\b"  # a time
    r"|[+−-]\d+ Elo"  # an Elo difference
    r")")
_SETTING = re.compile(r"(?:=|≥|≤|<|>)\s*$")  # "λ = 0.7", "ℓ0 = 0.42": a setting, not a result
_VERSION = re.compile(r"(?:Python|python|version|jax|JAX|flax|orbax|pgx|mctx|Apache License)\s*$")
_INLINE_CODE = re.compile(r"`[^`]*`")
_COMMIT = re.compile(r"`([0-9a-f]{7,40})`")
_DOC_SECTION = re.compile(r"(docs/[\w/.-]+\.md)\)?,?\s*(?:section\s*)?\"([^\"]+)\"")


def _blocks(text: str):
    """(first line number, block text, kind) for README's blocks; kind is "prose", "table" or "output"."""
    blocks, current, start, fence, fence_lang = [], [], 0, False, ""
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            if not fence:
                if current:
                    blocks.append((start, "\n".join(current), "prose"))
                current, start, fence, fence_lang = [], number + 1, True, line[3:].strip()
            else:
                if fence_lang == "":  # console output (no language): a result, sourced by what follows
                    blocks.append((start, "\n".join(current), "output"))
                current, fence = [], False
            continue
        if fence:
            current.append(line)
            continue
        if not line.strip() or line.startswith("#"):
            if current:
                blocks.append((start, "\n".join(current), "table" if current[0].startswith("|") else "prose"))
            current = []
            continue
        if not current:
            start = number
        current.append(line)
    if current:
        blocks.append((start, "\n".join(current), "table" if current[0].startswith("|") else "prose"))
    return blocks


def measured_numbers(block: str):
    """The measured numbers of a block of prose (inline code and settings left out)."""
    prose = _INLINE_CODE.sub(lambda m: " " * len(m.group(0)), block)
    found = []
    for match in _MEASURED.finditer(prose):
        before = prose[max(0, match.start() - 20):match.start()]
        if _SETTING.search(before) or _VERSION.search(before):
            continue
        found.append(match.group(0))
    return found


def _headings(page: pathlib.Path):
    return {re.sub(r"^#+\s*", "", line).strip() for line in page.read_text().splitlines() if line.startswith("#")}


def _is_commit(sha: str) -> bool:
    result = subprocess.run(["git", "cat-file", "-t", sha], cwd=ROOT, capture_output=True, text=True, check=False)
    return result.returncode == 0 and result.stdout.strip() == "commit"


def sources(block: str):
    """The sources a block names: its backticked commits and its docs sections."""
    commits = _COMMIT.findall(block)
    sections = _DOC_SECTION.findall(block)
    return commits, sections


def _has_git() -> bool:
    result = subprocess.run(["git", "rev-parse", "--is-shallow-repository"], cwd=ROOT, capture_output=True,
                            text=True, check=False)
    return result.returncode == 0 and result.stdout.strip() == "false"


def _unsourced(text: str, *, check_commits: bool):
    """[(line, numbers, why)] for the blocks whose measured numbers name no valid source."""
    blocks = _blocks(text)
    problems = []
    for index, (line, block, kind) in enumerate(blocks):
        numbers = measured_numbers(block) if kind != "output" else _MEASURED.findall(block)
        if not numbers:
            continue
        scope = block
        if kind == "output" and index + 1 < len(blocks):
            scope += "\n" + blocks[index + 1][1]  # "(printed by ... at `fa2dcb7`)" follows the output
        if kind == "table" and index > 0:
            scope += "\n" + blocks[index - 1][1]  # the paragraph that introduces the table
        commits, sections = sources(scope)
        bad = []
        if check_commits:
            bad += [f"`{sha}` is not a commit of this repository" for sha in commits if not _is_commit(sha)]
        for page, title in sections:
            title = " ".join(title.split())  # a title wrapped over lines
            path = ROOT / page
            if not path.exists():
                bad.append(f"{page} does not exist")
            elif not any(h == title or h.startswith(title + ":") for h in _headings(path)):
                bad.append(f"{page} has no section {title!r}")
        if bad:
            problems.append((line, numbers, "; ".join(bad)))
        elif not commits and not sections:
            problems.append((line, numbers, "no commit or docs section named"))
    return problems


def test_every_measured_number_in_readme_names_its_source():
    check_commits = _has_git()
    problems = _unsourced(README.read_text(), check_commits=check_commits)
    assert not problems, "README.md numbers without a source:\n" + "\n".join(
        f"  line {line}: {', '.join(numbers[:6])}: {why}" for line, numbers, why in problems)


# The checker itself, on text written for it.
@pytest.mark.parametrize("block, expected", [
    ("player 0 scores 0.80 against minimax2", ["0.80"]),
    ("57% of moves, 1.18x faster, in 11 minutes, +163 Elo", ["57%", "1.18x", "11 minutes", "+163 Elo"]),
    ("λ = 0.7 and `--override=team.lam=0.9` on Python 3.11", []),
    ("Gardner's 5x5 chess, Eq. 6-8, Fig. 5, 3 seeds", []),
])
def test_measured_numbers_are_told_from_settings(block, expected):
    assert measured_numbers(block) == expected


def test_a_number_without_a_source_is_found():
    text = "Intro.\n\nThe team scores 0.80 against minimax2.\n\nIt scores 0.70 (docs/nowhere.md, \"X\").\n"
    problems = _unsourced(text, check_commits=False)
    assert [(line, why) for line, _, why in problems] == [
        (3, "no commit or docs section named"), (5, "docs/nowhere.md does not exist")]


def test_a_table_takes_the_source_of_the_paragraph_before_it():
    text = "Measured at `deadbee`:\n\n| a | 0.5 |\n|---|---|\n\nUnsourced:\n\n| b | 0.7 |\n"
    assert [line for line, _, _ in _unsourced(text, check_commits=False)] == [8]


def test_a_source_that_exists_is_accepted():
    text = ("The demo's player 0 scores 0.80 (docs/results.md, \"The demo: a diverse team of 3 on connect four, "
            "and its plain-AZ control\").\n\n```\n| 0 | 0.80 |\n```\n\n(printed at `deadbee`)\n")
    assert _unsourced(text, check_commits=False) == []
    problems = _unsourced(text.replace("its plain-AZ control", "something else"), check_commits=False)
    assert len(problems) == 1 and "has no section" in problems[0][2]


@pytest.mark.skipif(not _has_git(), reason="needs the repository's whole git history (not a shallow clone)")
def test_a_commit_that_does_not_exist_is_refused():
    problems = _unsourced("It took 11 minutes (at `0000000`).\n", check_commits=True)
    assert problems and "not a commit" in problems[0][2]
