#!/usr/bin/env python3
"""The references of the Markdown pages: every relative link resolves, and so does every path
they name from the repository's root.

Reads every Markdown file that git tracks (without git: every one outside what the build
makes). Two kinds of reference are checked:
- a relative link, `[text](path)` or `[text](path#anchor)`: `path` exists, relative to the page
  (an empty path is the page itself); an anchor into a Markdown page names one of its
  headings, as GitHub spells a heading's anchor (lower case, spaces as `-`, punctuation other
  than `-` and `_` left out);
- a path in backticks outside a code block that starts with a top folder of the repository
  (`src/`, `tests/`, ...): it exists from the root, so that a page does not keep naming a file
  after it moved. What the build and the tests make (`target/`, `.venv`, `node_modules`) is
  not in the tree and is not checked, nor is a pattern (`{`, `*`, `<`).
Links with a scheme (`https:`, `mailto:`) are not followed.

Usage: python3 scripts/doc-links.py
  Exit status 1 when a reference does not resolve, with one `file:line: ...` message each.
"""

import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
# The top folders and files a page names paths from.
ROOT_PREFIXES = ("src/", "tests/", "scripts/", "fixtures/", "mcp-dap/", "examples/", "benches/", "docs/")
# Made by the build and the tests, never tracked.
GENERATED = {"target", ".venv", "node_modules"}
LINK = re.compile(r"\[[^\]]*\]\(([^()\s]+)\)")
CODE_SPAN = re.compile(r"`([^`\s]+)`")
SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)


def anchor(heading):
    """GitHub's anchor of a heading's text."""
    text = re.sub(r"[`*_]{1,2}([^`*_]+)[`*_]{1,2}", r"\1", heading.strip()).lower()
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page):
    """The anchors of every heading of a Markdown page (outside code blocks)."""
    found, in_code = set(), False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_code = not in_code
        elif not in_code and line.startswith("#"):
            found.add(anchor(line.lstrip("#")))
    return found


def check(page):
    """The messages of one page's references that do not resolve."""
    errors, in_code = [], False
    rel = page.relative_to(ROOT)
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            continue
        for target in LINK.findall(line):
            if SCHEME.match(target):
                continue
            path, _, fragment = target.partition("#")
            resolved = (page.parent / path).resolve() if path else page
            if not resolved.exists():
                errors.append(f"{rel}:{number}: the link {target} names no file")
            elif fragment and resolved.suffix == ".md" and fragment not in anchors(resolved):
                errors.append(f"{rel}:{number}: the link {target} names no heading of {path or rel}")
        for span in CODE_SPAN.findall(line):
            path = re.split(r"[:#]", span.rstrip(".,;"))[0]
            if not path.startswith(ROOT_PREFIXES) or any(c in path for c in "{*<"):
                continue
            if GENERATED & set(pathlib.PurePosixPath(path).parts):
                continue
            if not (ROOT / path).exists():
                errors.append(f"{rel}:{number}: the path {path} does not exist")
    return errors


def main():
    try:
        listed = subprocess.run(
            ["git", "ls-files", "*.md"], cwd=ROOT, check=True, capture_output=True, text=True
        ).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        # Not a git checkout (a source archive): every page outside what the build makes.
        listed = sorted(
            str(p.relative_to(ROOT))
            for p in ROOT.rglob("*.md")
            if not GENERATED & set(p.relative_to(ROOT).parts)
        )
    errors = [e for name in listed for e in check(ROOT / name)]
    for e in errors:
        print(e, file=sys.stderr)
    print(f"doc-links: {len(listed)} pages, {len(errors)} references that do not resolve")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
