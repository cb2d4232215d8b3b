"""The docs say what is true: their runnable commands run, their links and file names lead somewhere.

A fenced block with the info string ``console`` in ``docs/*.md`` is runnable: each ``$ `` line is a
command (a trailing ``\\`` continues it), run with bash in the repository root, and the lines after it
are its output, where ``...`` stands for any text (several lines included). ``[exit N]`` as the last
output line says the command exits with N; otherwise it must exit 0. Output is stdout and stderr
together. Only cheap commands go in such blocks (``--help``, one position on a shipped network);
long ones stay in plain blocks, which nothing runs.
"""
from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "docs").glob("*.md"))
READ = [ROOT / "README.md", *PAGES]
FENCE = re.compile(r"^( *)```(\S*)[^\n]*\n(.*?)^\1```[ \t]*$", re.S | re.M)  # fences may be indented (in a list)
EXIT = re.compile(r"^\[exit (\d+)\]$")


@dataclass(frozen=True)
class DocCommand:
    page: str
    line: int
    command: str
    expected: str
    status: int

    def __str__(self) -> str:
        return f"{self.page}:{self.line}"


def doc_commands(page: Path) -> list[DocCommand]:
    text = page.read_text(encoding="utf-8")
    found: list[DocCommand] = []
    for block in FENCE.finditer(text):
        indent, info, body = block.groups()
        if info != "console":
            continue
        first_line = text.count("\n", 0, block.start(3)) + 1
        body = "\n".join(line[len(indent):] if line.startswith(indent) else line for line in body.splitlines())
        found.extend(_parse_console(page.relative_to(ROOT).as_posix(), first_line, body))
    return found


def _parse_console(page: str, first_line: int, body: str) -> list[DocCommand]:
    commands: list[DocCommand] = []
    lines = body.splitlines()
    i = 0
    while i < len(lines):
        if not lines[i].startswith("$ "):
            raise ValueError(f"{page}:{first_line + i}: output with no command before it: {lines[i]!r}")
        start, command = i, lines[i][2:]
        while command.endswith("\\"):
            i += 1
            command = command[:-1] + " " + lines[i].strip()
        i += 1
        output: list[str] = []
        while i < len(lines) and not lines[i].startswith("$ "):
            output.append(lines[i])
            i += 1
        status = 0
        if output and (marker := EXIT.match(output[-1].strip())):
            status = int(marker.group(1))
            output.pop()
        commands.append(DocCommand(page, first_line + start, command, "\n".join(output), status))
    return commands


def matches(expected: str, actual: str) -> bool:
    """``expected`` with ``...`` as a wildcard equals ``actual`` (trailing spaces and blank ends ignored)."""
    def tidy(text: str) -> str:
        return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())

    pattern = ".*?".join(re.escape(part) for part in tidy(expected).split("..."))
    return re.fullmatch(pattern, tidy(actual), re.S) is not None


COMMANDS = [c for page in PAGES for c in doc_commands(page)]


def test_the_docs_have_runnable_commands_on_the_library_page():
    assert len(COMMANDS) >= 6
    assert any(c.page == "docs/cli.md" for c in COMMANDS)


@pytest.mark.parametrize("doc", COMMANDS, ids=str)
def test_a_documented_command_runs_and_prints_what_the_page_shows(doc: DocCommand):
    done = subprocess.run(["bash", "-c", doc.command], cwd=ROOT, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=180)
    assert done.returncode == doc.status, f"{doc}: {doc.command}\nexit {done.returncode}\n{done.stdout}"
    assert matches(doc.expected, done.stdout), f"{doc}: {doc.command}\nprinted:\n{done.stdout}"


def test_the_output_matcher_reads_ellipses_and_exit_markers():
    assert matches("a ... c\n...", "a b c\nmore\nlines\n")
    assert not matches("a ... c", "a b d")
    (doc,) = _parse_console("p.md", 1, "$ false \\\n    --x\nerror: ...\n[exit 2]")
    assert (doc.command, doc.expected, doc.status) == ("false  --x", "error: ...", 2)


# Links: [text](target), ![alt](target) and [name]: target, outside code.
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)|^\[[^\]]+\]:\s*(\S+)", re.M)
INLINE_CODE = re.compile(r"`[^`\n]+`")
# A name in backticks that starts like one of the repository's folders is a file that must exist.
REPO_PATH = re.compile(r"^(?:analysis|webapp|workers|bench|tests|configs|weights|static|templates|docs)/[\w./-]*$")


def _prose(text: str) -> str:
    text = FENCE.sub("", text)
    text = re.sub(r"^(?: {4}|\t).*$", "", text, flags=re.M)  # indented code blocks
    return INLINE_CODE.sub("", text)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.*?)\s*#*\s*$", text, re.M)}


def broken_links(page: Path) -> list[str]:
    broken = []
    for match in LINK.finditer(_prose(page.read_text(encoding="utf-8"))):
        target = match.group(1) or match.group(2)
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        path, _, fragment = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{page.relative_to(ROOT)}: {target} (no such file)")
        elif fragment and file.suffix == ".md" and fragment not in anchors(file):
            broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    return broken


def test_every_relative_link_in_the_readme_and_docs_leads_to_a_file_and_heading():
    assert READ[1:], "docs/ has no pages"
    assert [b for page in READ for b in broken_links(page)] == []


def test_every_file_the_docs_name_exists():
    missing = []
    for page in READ:
        text = FENCE.sub("", page.read_text(encoding="utf-8"))
        for span in INLINE_CODE.findall(text):
            name = span.strip("`").rstrip(".,:;")
            if REPO_PATH.match(name) and not (ROOT / name).exists():
                missing.append(f"{page.relative_to(ROOT)}: {name}")
    assert missing == []


def test_the_link_checker_finds_a_missing_file_and_a_missing_heading(tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    (tmp_path / "a.md").write_text("# A page\n\n## Where to read on\n")
    page = tmp_path / "b.md"
    page.write_text("[ok](a.md#where-to-read-on) [gone](c.md) [bad](a.md#nowhere) `[skip](d.md)`\n"
                    "```\n[code](e.md)\n```\n[web](https://example.org)\n")
    assert broken_links(page) == ["b.md: c.md (no such file)", "b.md: a.md#nowhere (no such heading)"]


def test_the_readme_opens_with_the_two_commands_and_fits_on_two_screens():
    """The project's README rule: the first lines are the two commands for a fresh machine, `.ci/run`
    calls the second, and the README is for a newcomer (lab notes live in docs/)."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    commands = [line.split("#")[0].strip() for line in lines[:2]]
    assert commands == ["./sightline serve", "./sightline test"]
    assert "./sightline test" in (ROOT / ".ci" / "run").read_text()
    assert len(lines) <= 80


DOTTED = re.compile(r"^(?:analysis|webapp|workers)(?:\.\w+)+$")


def _top_level_names(path: Path) -> set[str]:
    import ast

    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def dotted_name_exists(name: str, root: Path = ROOT) -> bool:
    """``a.b.c`` is a module or package of ours, or a name defined at the top of one (``a.b`` holding ``c``)."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        base = root.joinpath(*parts[:cut])
        module = base.with_suffix(".py") if base.with_suffix(".py").is_file() else base / "__init__.py"
        if module.is_file():
            rest = parts[cut:]
            return not rest or (len(rest) == 1 and rest[0] in _top_level_names(module))
    return False


def test_every_module_and_name_the_docs_give_in_dotted_form_exists():
    missing = []
    for page in READ:
        text = FENCE.sub("", page.read_text(encoding="utf-8"))
        for span in INLINE_CODE.findall(text):
            name = span.strip("`").rstrip(".,:;")
            if DOTTED.match(name) and not dotted_name_exists(name):
                missing.append(f"{page.relative_to(ROOT)}: {name}")
    assert missing == []


def test_the_dotted_name_check_reads_modules_packages_and_their_names(tmp_path):
    (tmp_path / "analysis" / "heads").mkdir(parents=True)
    (tmp_path / "analysis" / "heads" / "__init__.py").write_text("from .atlas import LABELS\n")
    (tmp_path / "analysis" / "heads" / "atlas.py").write_text("ATLAS_VERSION = 3\ndef score(): pass\n")
    assert dotted_name_exists("analysis.heads.atlas.ATLAS_VERSION", tmp_path)
    assert dotted_name_exists("analysis.heads.LABELS", tmp_path)
    assert not dotted_name_exists("analysis.heads.atlas.gone", tmp_path)
    assert not dotted_name_exists("analysis.heads.atlas.score.inner", tmp_path)
    assert not dotted_name_exists("analysis.nowhere", tmp_path)


ANALYSIS_COMMAND = re.compile(r"-m analysis ([a-z][\w-]*)((?:[ \t]+(?!#)[^\s|;&)`]+)*)")
MANAGE_COMMAND = re.compile(r"manage\.py ([a-z_]+)")


def _logical_lines(text: str) -> list[str]:
    return re.sub(r"\\\n\s*", " ", text).splitlines()


def analysis_commands_in(text: str) -> list[tuple[str, list[str]]]:
    """(sub-command, --options) for every ``-m analysis CMD ...`` in a text, code blocks included."""
    found = []
    for line in _logical_lines(text):
        for match in ANALYSIS_COMMAND.finditer(line):
            options = [t.strip("[]").split("=")[0] for t in match.group(2).split() if t.strip("[").startswith("--")]
            found.append((match.group(1), options))
    return found


def documented_analysis_commands() -> list[tuple[str, str, list[str]]]:
    return [(page.relative_to(ROOT).as_posix(), command, options) for page in READ
            for command, options in analysis_commands_in(page.read_text(encoding="utf-8"))]


def test_the_command_reader_takes_options_across_continued_lines_and_stops_at_comments_and_pipes():
    text = ("    python -m analysis puzzles --model m [--limit N] \\\n        --csv x.csv  # --not-this\n"
            "`python -m analysis search --set cpuct=2 | jq`, torchrun -m analysis train --config c.toml")
    assert analysis_commands_in(text) == [("puzzles", ["--model", "--limit", "--csv"]),
                                          ("search", ["--set"]), ("train", ["--config"])]


def test_every_documented_analysis_command_and_option_exists():
    from analysis.cli import build_parser

    parser = build_parser()
    (subparsers,) = [a for a in parser._actions if a.dest == "command"]
    documented = documented_analysis_commands()
    assert len(documented) > 40
    wrong = []
    for page, command, options in documented:
        sub = subparsers.choices.get(command)
        if sub is None:
            wrong.append(f"{page}: no command {command!r}")
            continue
        known = set(sub._option_string_actions)
        for nested in (a for a in sub._actions if isinstance(a.choices, dict)):  # ablation run, ablation table
            known |= {o for action in nested.choices.values() for o in action._option_string_actions}
        wrong += [f"{page}: {command} has no option {o}" for o in options if o not in known]
    assert wrong == []


def test_every_documented_manage_command_exists():
    import subprocess as sp

    listed = sp.run([sys.executable, "manage.py", "help", "--commands"], cwd=ROOT, capture_output=True,
                    text=True, timeout=120, check=True).stdout.split() + ["help"]
    documented = {(page.relative_to(ROOT).as_posix(), m.group(1)) for page in READ
                  for m in MANAGE_COMMAND.finditer(page.read_text(encoding="utf-8"))}
    assert {"serve", "analyze_pgn", "head_atlas"} <= {c for _, c in documented}
    assert [f"{page}: {c}" for page, c in sorted(documented) if c not in listed] == []
