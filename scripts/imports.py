#!/usr/bin/env python3
"""The import check of each package: no import circle, and every import goes down the layers.

Checks the src/ of each package of PACKAGES (the bridge's src/ and mcp-dap/src/), each on its
own: a package's paths into another package (mcp-dap's `mcp_bridge::`) are not its modules.
Reads every `.rs` file under a src/. Each file is a module: `protocol/wire/jsonrpc.rs` is
`protocol/wire/jsonrpc`, `transport/http/mod.rs` is `transport/http`, `lib.rs` is `lib`; `main.rs`
and `bin/*.rs` are the binaries, which reach the library only through paths that start with the
library's name (`mcp_bridge::`, `mcp_dap::`).
Comments, strings, and the items under `#[cfg(test)]` with the files that they declare, are
left out. A module imports another when its code names it:
- in a `use` tree (braces, `self` and `as` included), or in a path that starts with `crate::`,
  `super::`, `self::` or the library's name;
- in a path through a module that a `use` brought in (`http::client::ProxyEnv` after
  `use crate::transport::http;`), or through a child module's bare name (`exchange::post`);
- by calling a `#[macro_export]` macro (`counted_handlers!`): an import of the module that
  defines it.
A path names the longest module that has a file, so a re-export counts as an import of the
module that re-exports it. Paths are resolved from their file: an inline `mod name { .. }`,
which only tests and the binaries have, is not tracked as a module of its own.

The rule: a module is made of its children, so a module that names one of its own descendants
does not import it. Every other edge counts: child to parent, sibling, across the tree. The
check fails on an edge in an import circle (a strongly connected component of more than one
module), to a higher layer (`layers`), or inside a layer to a higher room (`rooms`: the folders
of a layer, each a sub-layer, such as protocol/wire below protocol/rules), unless `allowed` holds
it; and on an `allowed` edge that is no longer one of these, so that the list only shrinks.

Usage: python3 scripts/imports.py [-v] [SRC]
  -v prints the graph, the circles and the edges against the layers; SRC is the src/ of one
  package of PACKAGES (src, mcp-dap/src), every package's by default. Exit status 1 on a
  failure, with one message per edge.
"""

import pathlib
import re
import sys
from collections import defaultdict

# Each package's src/ (from the repository's root), with its library's name (the anchor of its
# binaries' paths) and:
# - layers, lowest first. A module imports modules of its own layer and of lower ones. A
#   top-level module not named there belongs to the application, the top layer (lib, main, the
#   binaries, and the package's own wiring).
# - rooms of a layer's top module, lowest first: a module of a room imports modules of its own
#   room and of lower rooms (and of lower layers). The top module itself (`protocol/mod.rs`) and
#   a file of it outside every room rank above its rooms.
# - allowed: known edges in a circle or against the layers, each with the change that removes
#   it: none. An entry that is no longer needed fails the check, so the set never outlives its
#   reason.
PACKAGES = {
    "src": {
        "library": "mcp_bridge",
        "layers": [
            ("protocol", {"protocol"}),  # the MCP wire as values: no I/O, clock or actor
            ("log", {"log"}),  # the stderr sink; the option files' I/O and error text (log/files)
            ("server", {"server"}),  # the embedded MCP server API
            ("transport", {"transport"}),  # above server: transport::memory serves a Server in process
            ("auth", {"auth"}),
            ("actors", {"actors"}),  # actors/config: what the actors run with, built by the application
        ],
        "rooms": {
            # JSON-RPC on lines < the two revisions as types < the listen stream < what the
            # bridge decides
            "protocol": ["wire", "revisions", "listen", "rules"],
        },
        "allowed": set(),
    },
    "mcp-dap/src": {
        "library": "mcp_dap",
        "layers": [
            ("dap", {"dap"}),  # the Debug Adapter Protocol as values: no I/O, clock or actor
            # what the actors share: the bound of an echoed input, the process's children
            ("shared", {"echo", "children"}),
            ("adapters", {"adapters"}),  # the adapters' commands and launch arguments
            ("adapter", {"adapter"}),  # the actor of one DAP connection
            ("session", {"session"}),  # the actor of one session, above its adapter
            ("sessions", {"sessions"}),  # the supervisor of the sessions
            ("tools", {"tools"}),  # the MCP tools, which reach the actors
        ],
        "rooms": {},
        "allowed": set(),
    },
}
APPLICATION = "application"

USE = re.compile(r"(?<![\w:])use\s+([^;]+);")
# `$crate::..` and `$x::..` in a macro's body are the caller's paths: the call counts instead.
# {library}: the package's library name.
ANCHORED = r"(?<![\w:$])(crate|super|self|{library})((?:::\w+)+)"
RELATIVE = re.compile(r"(?<![\w:$])([a-z_]\w*)((?:::\w+)+)")
TEST_ONLY = re.compile(r"#\[cfg\((?:test|all\(test\b[^\]]*\))\)\]")
ATTRIBUTE = re.compile(r"\s*#\[[^\]]*\]")
MOD_FILE = re.compile(r"\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;")
USE_ITEM = re.compile(r"\s*(?:pub(?:\([^)]*\))?\s+)?use\b")
MACRO_EXPORT = re.compile(r"#\[macro_export\]\s*macro_rules!\s*(\w+)")
LITERAL = re.compile(r"""//|/\*|\bb?r#*"|"|'""")
RAW_STRING = re.compile(r'b?r(#*)"')
CHAR = re.compile(r"'(?:\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'")


def blank(text, start, end):
    """The text with [start, end) turned to spaces (newlines kept): positions stay."""
    return text[:start] + re.sub(r"[^\n]", " ", text[start:end]) + text[end:]


def literal_end(text, i):
    """The end of the comment, string or char literal that LITERAL found at i, or None."""
    if text.startswith("//", i):
        end = text.find("\n", i)
        return len(text) if end < 0 else end
    if text.startswith("/*", i):
        depth, j = 1, i + 2
        while j < len(text) and depth:
            if text.startswith("/*", j):
                depth, j = depth + 1, j + 2
            elif text.startswith("*/", j):
                depth, j = depth - 1, j + 2
            else:
                j += 1
        return j
    if raw := RAW_STRING.match(text, i):
        end = text.find('"' + raw.group(1), raw.end())
        return len(text) if end < 0 else end + 1 + len(raw.group(1))
    if text[i] == '"':
        j = i + 1
        while j < len(text) and text[j] != '"':
            j += 2 if text[j] == "\\" else 1
        return j + 1
    char = CHAR.match(text, i)
    return char.end() if char else None  # not a char: a lifetime


def code_only(text):
    """The text with its comments, strings and char literals blanked."""
    pieces, start, i = [], 0, 0
    while found := LITERAL.search(text, i):
        end = literal_end(text, found.start())
        if end is None:
            i = found.end()
            continue
        pieces += [text[start : found.start()], re.sub(r"[^\n]", " ", text[found.start() : end])]
        start = i = end
    return "".join(pieces) + text[start:]


def item_end(text, i):
    """The end of the item that starts at i: after its `;`, or after its `{ .. }` body."""
    depth, is_use = 0, USE_ITEM.match(text, i)
    for j in range(i, len(text)):
        if text[j] in "([{":
            depth += 1
        elif text[j] in ")]}":
            depth -= 1
            if depth < 0:
                return j  # the end of the block around an item without a body
            if depth == 0 and text[j] == "}" and not is_use:
                return j + 1
        elif text[j] == ";" and depth == 0:
            return j + 1
    return len(text)


def without_tests(code):
    """The code with its `#[cfg(test)]` items blanked, and the names of the `mod x;` among them."""
    test_files = []
    while match := TEST_ONLY.search(code):
        start = match.end()
        while attribute := ATTRIBUTE.match(code, start):
            start = attribute.end()
        end = item_end(code, start)
        if declared := MOD_FILE.match(code, start, end):
            test_files.append(declared.group(1))
        code = blank(code, match.start(), end)
    return code, test_files


def use_paths(tree):
    """The paths of a `use` tree, each as (segments, the name it brings in, or None).

    `a::{b, c::{d as e, *}, self}` gives (a b, b), (a c d, e), (a c *, None), (a, a)."""
    tree = re.sub(r"\s", "", re.sub(r"\s+as\s+(\w+)", r"@\1", tree))
    paths = []

    def walk(text, prefix):
        depth, start = 0, 0
        for k, c in enumerate(text + ","):
            depth += (c == "{") - (c == "}")
            if c != "," or depth:
                continue
            part, start = text[start:k], k + 1
            if "{" in part:
                head, inner = part.split("{", 1)
                walk(inner[:-1], prefix + [s for s in head.split("::") if s])
            elif part:
                path, _, alias = part.partition("@")
                segments = prefix + ([] if path == "self" else [s for s in path.split("::") if s])
                last = segments[-1] if segments else None
                paths.append((segments, alias or (last if last != "*" else None)))

    walk(tree, [])
    return paths


def module_of(path, src):
    """The module of a file as a tuple of names: () is lib.rs, ("bin", x) the binary x."""
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts == ["lib"]:
        return ()
    return tuple(parts[:-1] if parts[-1] == "mod" else parts)


def is_binary(module):
    return bool(module) and module[0] in ("main", "bin")


def name(module):
    return "/".join(module) if module else "lib"


class Crate:
    """The files under a package's src/, their code (no tests, comments or strings), the exported
    macros, and the package's layers, rooms and allowed edges."""

    def __init__(self, src_name, src, package):
        self.src_name, self.src = src_name, src
        self.library = package["library"]
        self.layers, self.rooms, self.allowed = package["layers"], package["rooms"], package["allowed"]
        self.anchors = ("crate", "super", "self", self.library)
        self.anchored = re.compile(ANCHORED.replace("{library}", self.library))
        self.files, self.code, self.macros = {}, {}, {}
        test_files = set()
        for path in sorted(src.rglob("*.rs")):
            module = module_of(path, src)
            code, children = without_tests(code_only(path.read_text()))
            self.files[module], self.code[module] = path, code
            test_files.update(module + (child,) for child in children)
            for macro in MACRO_EXPORT.finditer(code):
                self.macros[macro.group(1)] = module
        for module in test_files & set(self.files):
            del self.files[module], self.code[module]

    def absolute(self, module, segments):
        """The names of a path from the crate root, or None when it is not of the library."""
        head = segments[0]
        if head == self.library:
            return segments[1:]
        if is_binary(module):
            return None
        if head == "crate":
            return segments[1:]
        if head in ("self", "super"):
            base, rest = list(module), list(segments)
            while rest and rest[0] in ("self", "super"):
                if rest.pop(0) == "super":
                    base.pop()
            return base + rest
        if module + (head,) in self.files:
            return list(module) + segments  # a child module's bare name
        return None

    def target(self, names):
        """The module that the names from the root reach: the longest prefix with a file."""
        if names and names[0] in self.macros:
            return self.macros[names[0]]
        names = [n for n in names if n != "*"]
        while names and tuple(names) not in self.files:
            names.pop()
        return tuple(names)


def named_modules(crate, module):
    """{module named by the code of `module`: ["line: path", ..]}, one entry per line."""
    code = crate.code[module]
    found = defaultdict(dict)

    def note(names, position, path):
        target = None if names is None else crate.target(names)
        if target is not None and target != module:
            line = code.count("\n", 0, position) + 1
            found[target].setdefault(line, f"{line}: {path}")

    aliases, rest_of_code = {}, code
    for use in USE.finditer(code):
        for segments, bound in use_paths(use.group(1)):
            names = crate.absolute(module, segments) if segments else None
            note(names, use.start(), "use " + "::".join(segments))
            if bound and names is not None and crate.target(names) == tuple(names):
                aliases[bound] = tuple(names)
        rest_of_code = blank(rest_of_code, use.start(), use.end())  # read once, as a tree
    for path in crate.anchored.finditer(rest_of_code):
        segments = [path.group(1)] + path.group(2).split("::")[1:]
        note(crate.absolute(module, segments), path.start(), path.group(0))
    for path in RELATIVE.finditer(rest_of_code):
        head, rest = path.group(1), path.group(2).split("::")[1:]
        if head in aliases:
            note(list(aliases[head]) + rest, path.start(), path.group(0))
        elif head not in crate.anchors:
            note(crate.absolute(module, [head] + rest), path.start(), path.group(0))
    for macro, home in crate.macros.items():
        for call in re.finditer(r"(?<![\w$])" + macro + r"!", rest_of_code):
            note([macro], call.start(), macro + "!")
    return {target: list(lines.values()) for target, lines in found.items()}


def import_graph(crate):
    """{module: {imported module: ["line: path", ..]}}; naming a descendant is no import."""
    return {
        module: {
            target: lines
            for target, lines in named_modules(crate, module).items()
            if target[: len(module)] != module
        }
        for module in crate.code
    }


def circles(graph):
    """The strongly connected components of more than one module (Tarjan), largest first."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = [stack.pop()]
            while component[-1] != v:
                component.append(stack.pop())
            on_stack.difference_update(component)
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 2 * len(graph) + 100))  # one frame a module
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found, key=lambda c: (-len(c), c))


def layer(crate, module):
    """(rank, name) of the module's layer."""
    for rank, (layer_name, tops) in enumerate(crate.layers):
        if module and module[0] in tops:
            return rank, layer_name
    return len(crate.layers), APPLICATION


def room(crate, module):
    """(rank, name) of the module's room inside its top module, or None for a top module
    without rooms."""
    rooms = crate.rooms.get(module[0]) if module else None
    if rooms is None:
        return None
    if len(module) > 1 and module[1] in rooms:
        return rooms.index(module[1]), name(module[:2])
    return len(rooms), module[0]


def up_the_rooms(crate, a, b):
    """Whether a imports a module of a higher room of the same top module."""
    return a[:1] == b[:1] and room(crate, a) is not None and room(crate, b) > room(crate, a)


def offending_edges(crate, graph):
    """{(from, to): [why, ..]} for each edge in a circle, to a higher layer or a higher room."""
    offending = defaultdict(list)
    for circle in circles(graph):
        for a in circle:
            for b in graph[a].keys() & set(circle):
                offending[a, b].append("closes an import circle: " + ", ".join(map(name, circle)))
    for a, targets in graph.items():
        for b in targets:
            if layer(crate, b) > layer(crate, a):
                offending[a, b].append(
                    f"goes up the layers: {layer(crate, a)[1]} imports {layer(crate, b)[1]}")
            elif up_the_rooms(crate, a, b):
                offending[a, b].append(
                    f"goes up the rooms: {room(crate, a)[1]} imports {room(crate, b)[1]}")
    return offending


def print_graph(crate, graph, offending):
    for module in sorted(graph):
        print(f"{name(module):28} -> {', '.join(sorted(map(name, graph[module]))) or '-'}")
    edge = lambda a, b: f"    {name(a)} -> {name(b)}   ({'; '.join(graph[a][b][:3])})"
    for circle in circles(graph):
        print(f"circle of {len(circle)}: {', '.join(map(name, circle))}")
        for a in circle:
            for b in sorted(graph[a].keys() & set(circle)):
                print(edge(a, b))
    print("against the layers and the rooms:")
    for a, b in sorted(offending):
        if layer(crate, b) > layer(crate, a) or up_the_rooms(crate, a, b):
            print(edge(a, b))


def glob_imports(crate):
    """One message for each `use` of all the names of a module's ancestor (`use super::*;`)
    outside the tests: it hides which names a file takes from its parent, a tie that the edges
    do not show (a child is part of its parent), so each is imported by name."""
    messages = []
    for module, code in sorted(crate.code.items()):
        for use in USE.finditer(code):
            for segments, _ in use_paths(use.group(1)):
                if len(segments) < 2 or segments[-1] != "*":
                    continue
                names = crate.absolute(module, segments[:-1])
                if names is not None and tuple(names) == module[:len(names)]:
                    path = crate.files[module].relative_to(crate.src.parent)
                    line = code.count("\n", 0, use.start()) + 1
                    messages.append(f"{name(module)} imports every name of {name(tuple(names))}"
                                    f" with `use {'::'.join(segments)}`: import them by name"
                                    f"\n    {path}:{line}")
    return messages


def problems(crate, graph, offending):
    """One message for each offending edge that `allowed` lacks, each entry it no longer needs,
    and each glob import of an ancestor outside the tests."""
    messages = glob_imports(crate)
    for (a, b), whys in sorted(offending.items()):
        if (name(a), name(b)) not in crate.allowed:
            path = crate.files[a].relative_to(crate.src.parent)
            where = graph[a][b]
            lines = "".join(f"\n    {path}:{line}" for line in where[:3])
            more = f"\n    (and {len(where) - 3} more lines)" if len(where) > 3 else ""
            messages.append(f"{name(a)} -> {name(b)} {'; '.join(whys)}{lines}{more}")
    edges = {(name(a), name(b)) for a in graph for b in graph[a]}
    for entry in sorted(crate.allowed - {(name(a), name(b)) for a, b in offending}):
        state = "is no longer in a circle or up the layers" if entry in edges else "is gone"
        messages.append(f"the edge {entry[0]} -> {entry[1]} {state}: "
                        f"delete its entry from the allowed edges of {crate.src_name} in "
                        "scripts/imports.py")
    return messages


def check(src_name, src, verbose):
    """Checks one package's src/: 0, or 1 on a failure (with one message per edge)."""
    crate = Crate(src_name, src, PACKAGES[src_name])
    graph = import_graph(crate)
    offending = offending_edges(crate, graph)
    if verbose:
        print_graph(crate, graph, offending)
    edges = sum(map(len, graph.values()))
    messages = problems(crate, graph, offending)
    for message in messages:
        print(f"imports ({src_name}): " + message)
    if messages:
        print(f"imports ({src_name}): {len(messages)} failure(s) in {len(graph)} modules and {edges} "
              f"edges (python3 scripts/imports.py -v {src_name} prints the graph and the circles)")
        return 1
    print(f"imports ({src_name}): {len(graph)} modules, {edges} edges, no circle, layer or room edge"
          f" outside the allowed ones; {len(crate.allowed)} allowed edges left")
    return 0


def main(argv):
    verbose = "-v" in argv
    args = [a for a in argv if a != "-v"]
    root = pathlib.Path(__file__).resolve().parent.parent
    chosen = list(PACKAGES)
    if args:
        given = pathlib.Path(args[0]).resolve()
        chosen = [src_name for src_name in PACKAGES if (root / src_name).resolve() == given]
        if not chosen:
            print(f"imports: {args[0]} is none of the src/ folders this checks: {', '.join(PACKAGES)}")
            return 2
    return max(check(src_name, root / src_name, verbose) for src_name in chosen)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
