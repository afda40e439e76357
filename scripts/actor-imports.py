#!/usr/bin/env python3
"""Prints which actor file imports which (src/actors/**.rs) and fails on an import circle.

Each file is a module (`frontend.rs` is `frontend`, `frontend/messages.rs` is
`frontend::messages`); a path `super::..`, `self::..` or `crate::actors::..` outside a comment
is resolved to the longest module that has a file. `counted_handlers!` counts as an import of
`link`. A file's own test module (`use super::*` inside `mod tests`) is not an import.

Usage: python3 scripts/actor-imports.py [DIR]  (DIR: src/actors; exit 1 when there is a circle)
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent / "src" / "actors")
PATH = re.compile(r"\b(crate::actors|super|self)(::(?:\w+|\*|\{)(?:::\w+)*)")


def module_of(path):
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts == ["mod"]:
        return ()
    return tuple(parts)


def main():
    files = {module_of(p): p for p in sorted(ROOT.rglob("*.rs"))}
    graph = {}
    for mod, path in files.items():
        deps = set()
        in_tests = False
        for line in path.read_text().splitlines():
            code = line.split("//", 1)[0]
            if re.match(r"\s*mod tests\s*\{", code):
                in_tests = True  # the inline test module: to the end of the file
            if in_tests:
                continue
            if "counted_handlers!" in code and mod != ("link",):
                deps.add(("link",))
            for head, tail in PATH.findall(code):
                names = [n for n in tail.split("::") if n and n not in "*{"]
                if head == "crate::actors":
                    target = names
                elif head == "super":
                    target = list(mod[:-1]) + names
                else:
                    target = list(mod) + names
                while target and tuple(target) not in files:
                    target.pop()
                t = tuple(target)
                if t and t != mod:
                    deps.add(t)
        graph[mod] = deps
    name = lambda m: "/".join(m) + ".rs"
    for mod in sorted(graph):
        if mod:
            print(f"{name(mod):28} imports {', '.join(sorted(name(d) for d in graph[mod])) or '-'}")
    # Circles: a depth-first search.
    state, stack, circles = {}, [], []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for d in graph.get(m, ()):
            if state.get(d) == 1:
                circles.append(stack[stack.index(d):] + [d])
            elif d not in state:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)
    for c in circles:
        print("CIRCLE: " + " -> ".join(name(m) for m in c))
    if circles:
        return 1
    print("no import circle among the actor files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
