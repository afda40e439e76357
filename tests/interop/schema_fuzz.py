#!/usr/bin/env python3
"""Schema fuzz test of mcp-bridge: every frame the editor gets is valid 2025-11-25.

    schema_fuzz.py [--bridge PATH] [--seed N | --random-seed] [--count N] [--keep DIR] [-v]

    --bridge defaults to $MCP_BRIDGE_BIN, else <repo>/target/debug/mcp-bridge; the seed to
    $SCHEMA_FUZZ_SEED (a number, or `random`), else a fixed one; --count to 1000 per method.

1. Generates random results that are valid under the official 2026-07-28 schema
   (tests/schemas/schema-2026-07-28.json) for each forwarded method, plus upstream errors, with
   a seeded generator driven by the schema itself (see Generator). Every generated result is
   checked against its 2026-07-28 definition with `jsonschema` before use; one that is not
   valid is a failure of the generator (the inputs stay what a real server may send). After
   that check, a share of list results (P_BAD_ITEMS) gets invalid items put among the valid
   ones (BAD_ITEMS: what servers in the wild send, refused by both revisions).
2. Starts the real bridge in front of fuzz_upstream.py, which answers each request with the
   generated case the request names, and talks to the bridge as the editor (2025-11-25
   initialize, then every case as a request, 64 in flight).
3. Validates every frame the editor gets against src/protocol/schemas/schema-2025-11-25.json (the
   response envelope and the method's result definition, or the error response), and checks
   that no valid result became an error, lists keep every valid item in order (a share of list
   results also carries invalid items, BAD_ITEMS: the bridge repairs the unambiguous ones and
   drops the others, exactly those), no tool schema keeps a null member at any depth, errors keep their code (-32042 becomes -32603, resource not found
   becomes -32002).

Prints the seed (rerun a failure with --seed), the counts per method, each failure (the first
ones with the input case and the frame), and last `schema-fuzz: N passed, M failed` (N and M
count cases). Exit status 1 when M > 0, 2 when the setup fails.
Needs: python3 >= 3.10 with `jsonschema` (the interop venv of run.sh has it).
"""
import argparse
import base64
import json
import os
import queue
import random
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SCHEMAS = os.path.join(REPO, "tests", "schemas")
SCHEMAS_2025 = os.path.join(REPO, "src", "protocol", "schemas")  # the copy the bridge embeds
DEFAULT_SEED = 20251125
DEFAULT_COUNT = 1000  # cases per method
IN_FLIGHT = 64  # requests the editor keeps in flight
BATCH_TIMEOUT_S = 60  # time limit for the answers of one batch
MAX_DEPTH = 10  # nesting of generated values (the bridge accepts 64)
RECURSION_CAP = 3  # times one definition may nest in itself
P_OPTIONAL = 0.45  # chance of each optional member
P_ERROR = 0.08  # chance that a case is an upstream error
P_NOT_FOUND = 0.05  # resources/read: chance of 2026's resource-not-found error
P_BAD_ITEMS = 0.15  # list results: chance that invalid items are put among the valid ones
MAX_BAD_ITEMS = 3  # invalid items put into one list result
SHOWN_FAILURES = 10  # failures printed with their case and frame

# Forwarded method -> (request params for case i, 2026-07-28 result def, 2025-11-25 result def,
# list member or None).
METHODS = {
    "tools/list": (lambda i: {"cursor": str(i)}, "ListToolsResult", "tools"),
    "tools/call": (lambda i: {"name": "fuzz", "arguments": {"case": i}}, "CallToolResult", None),
    "prompts/list": (lambda i: {"cursor": str(i)}, "ListPromptsResult", "prompts"),
    "prompts/get": (lambda i: {"name": "fuzz", "arguments": {"case": str(i)}}, "GetPromptResult", None),
    "resources/list": (lambda i: {"cursor": str(i)}, "ListResourcesResult", "resources"),
    "resources/templates/list": (lambda i: {"cursor": str(i)}, "ListResourceTemplatesResult",
                                 "resourceTemplates"),
    "resources/read": (lambda i: {"uri": f"fuzz://read/{i}"}, "ReadResourceResult", None),
    "completion/complete": (lambda i: {"ref": {"type": "ref/prompt", "name": "fuzz"},
                                       "argument": {"name": "a", "value": str(i)}},
                            "CompleteResult", None),
}

# ---- generator overlay: JSON Schema documents as servers write them --------------------------
# The 2026-07-28 Tool admits any members in inputSchema/outputSchema ("additionalProperties":
# {}), so a generator that follows the schema alone would almost never write `properties` or
# `required` there. These definitions only narrow what the 2026 schema admits (every value they
# produce is valid 2026-07-28, which is checked), and make schema keywords with null, boolean,
# misplaced or nested values likely.
TYPES = ["string", "integer", "number", "boolean", "null", "array", "object"]
REF = lambda name: {"$ref": f"#/$defs/{name}"}  # noqa: E731
FUZZ_DEFS = {
    "FuzzType": {"anyOf": [{"type": "null"}, {"enum": TYPES},
                           {"type": "array", "items": {"enum": TYPES}, "maxItems": 3}]},
    "FuzzSchema": {"anyOf": [{"type": "null"}, {"type": "boolean"}, REF("FuzzSchemaObject"),
                             REF("FuzzSchemaObject")]},
    "FuzzSchemaMap": {"anyOf": [{"type": "null"},
                                {"type": "object", "additionalProperties": REF("FuzzSchema"),
                                 "maxProperties": 3},
                                {"type": "object", "additionalProperties": REF("FuzzSchema"),
                                 "maxProperties": 3},
                                {"type": ["integer", "string", "boolean"]},
                                {"type": "array", "items": REF("FuzzSchema"), "maxItems": 2}]},
    "FuzzSchemaList": {"anyOf": [{"type": "null"},
                                 {"type": "array", "items": REF("FuzzSchema"), "maxItems": 3}]},
    "FuzzRequired": {"anyOf": [{"type": "null"},
                               {"type": "array", "items": {"type": "string"}, "maxItems": 3},
                               {"type": "array", "items": {"type": ["string", "integer", "null"]},
                                "maxItems": 3},
                               {"type": ["string", "boolean", "integer", "object"]}]},
    "FuzzSchemaObject": {
        "type": "object",
        "properties": {
            "type": REF("FuzzType"),
            "description": {"type": ["string", "null"]},
            "title": {"type": ["string", "null"]},
            "properties": REF("FuzzSchemaMap"),
            "patternProperties": REF("FuzzSchemaMap"),
            "$defs": REF("FuzzSchemaMap"),
            "definitions": REF("FuzzSchemaMap"),
            "dependentSchemas": REF("FuzzSchemaMap"),
            "required": REF("FuzzRequired"),
            "items": {"anyOf": [REF("FuzzSchema"),
                                {"type": "array", "items": REF("FuzzSchema"), "maxItems": 2}]},
            "prefixItems": REF("FuzzSchemaList"),
            "additionalProperties": REF("FuzzSchema"),
            "not": REF("FuzzSchema"),
            "if": REF("FuzzSchema"),
            "then": REF("FuzzSchema"),
            "else": REF("FuzzSchema"),
            "contains": REF("FuzzSchema"),
            "propertyNames": REF("FuzzSchema"),
            "anyOf": REF("FuzzSchemaList"),
            "oneOf": REF("FuzzSchemaList"),
            "allOf": REF("FuzzSchemaList"),
            "enum": {"anyOf": [{"type": "null"}, {"type": "array", "maxItems": 3}]},
            "const": {},
            "default": {},
            "format": {"type": ["string", "null"]},
            "minimum": {"type": ["number", "null"]},
            "$ref": {"type": ["string", "null"]},
        },
        "additionalProperties": False,
    },
}


def generation_defs(defs):
    """The 2026-07-28 $defs with the overlay: results are complete (`resultType` "complete":
    input_required results are rounds of the bridge, not results for the editor), tool schemas
    are JSON-Schema-like (FUZZ_DEFS), error codes are often the ones the bridge maps."""
    out = json.loads(json.dumps(defs))
    out.update(json.loads(json.dumps(FUZZ_DEFS)))
    for spec in METHODS.values():
        out[spec[1]]["properties"]["resultType"] = {"const": "complete"}
    tool = out["Tool"]["properties"]
    keywords = dict(FUZZ_DEFS["FuzzSchemaObject"]["properties"])
    del keywords["type"]
    for member, root_type in (("inputSchema", {"const": "object"}),
                              ("outputSchema", {"anyOf": [{"const": "object"}, {"const": "object"},
                                                          {"const": "object"}, REF("FuzzType")]})):
        props = dict(keywords)
        props.update(tool[member].get("properties", {}))
        props["type"] = tool[member]["properties"].get("type", root_type)
        if member == "outputSchema":
            props["type"] = root_type
        tool[member]["properties"] = props
    # `execution` is a 2025-11-25 Tool member that 2026-07-28 no longer defines, so it admits
    # any value there: valid 2025 ones and others.
    tool_member = out["Tool"]["properties"]
    tool_member["execution"] = {"anyOf": [
        {"type": "object", "properties": {"taskSupport": {"enum": [
            "forbidden", "optional", "required"]}}},
        {"type": "object", "properties": {"taskSupport": {"type": ["string", "null"]}}},
        {"type": ["string", "null", "boolean", "integer"]}]}
    out["Error"]["properties"]["code"] = {"anyOf": [
        {"enum": [-32602, -32603, -32601, -32600, -32042, -32002, -32700, -32000]},
        {"type": "integer"}]}
    return out


# ---- the generator ---------------------------------------------------------------------------

class Generator:
    """Random instances of a JSON Schema, for the keywords the MCP schemas use: $ref, anyOf,
    const, enum, type, properties, required, additionalProperties, maxProperties, items,
    maxItems, minimum, maximum, format (uri, uri-template, byte). Any other keyword is an
    error, so that nothing is generated past what the schema says. Optional members appear
    with P_OPTIONAL; objects get extra members where the schema admits them; nesting stops at
    MAX_DEPTH and at RECURSION_CAP self-nestings of a definition (then only required members,
    empty arrays and scalar alternatives are chosen, which the schemas always admit)."""

    KNOWN = {"$ref", "anyOf", "const", "enum", "type", "properties", "required",
             "additionalProperties", "maxProperties", "items", "maxItems", "minimum", "maximum",
             "format", "description", "$schema"}

    def __init__(self, defs, rng):
        self.defs = defs
        self.rng = rng

    def value(self, schema, chain=(), depth=0):
        if schema is True or schema == {}:
            return self.any_json(depth)
        unknown = set(schema) - self.KNOWN
        if unknown:
            raise ValueError(f"generator: unsupported keywords {sorted(unknown)}")
        shallow = depth >= MAX_DEPTH or any(chain.count(n) >= RECURSION_CAP for n in set(chain))
        if "$ref" in schema:
            name = schema["$ref"].rsplit("/", 1)[1]
            return self.value(self.defs[name], chain + (name,), depth)
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return self.rng.choice(schema["enum"])
        if "anyOf" in schema:
            branches = schema["anyOf"]
            if shallow:
                flat = [b for b in branches if "$ref" not in b and not self._nests(b)]
                branches = flat or branches
            return self.value(self.rng.choice(branches), chain, depth)
        t = schema.get("type")
        if isinstance(t, list):
            t = self.rng.choice(t)
        if t is None:
            t = "object" if "properties" in schema else "array" if "items" in schema else None
        if t is None:
            return self.any_json(depth)
        if t == "object":
            return self.obj(schema, chain, depth, shallow)
        if t == "array":
            limit = 0 if shallow else min(schema.get("maxItems", 3), 3)
            n = self.rng.randint(0, limit)
            return [self.value(schema.get("items", {}), chain, depth + 1) for _ in range(n)]
        if t == "string":
            return self.string(schema.get("format"))
        if t == "integer":
            return self.integer(schema.get("minimum"), schema.get("maximum"))
        if t == "number":
            return self.number(schema.get("minimum"), schema.get("maximum"))
        if t == "boolean":
            return self.rng.random() < 0.5
        if t == "null":
            return None
        raise ValueError(f"generator: unknown type {t}")

    @staticmethod
    def _nests(schema):
        t = schema.get("type")
        types = t if isinstance(t, list) else [t]
        return any(x in ("object", "array") for x in types) and not (
            schema.get("maxItems") == 0 or schema.get("maxProperties") == 0)

    def obj(self, schema, chain, depth, shallow):
        props = schema.get("properties", {})
        required = set(schema.get("required", []))
        out = {}
        for key, sub in props.items():
            if key in required or (not shallow and self.rng.random() < P_OPTIONAL):
                out[key] = self.value(sub, chain, depth + 1)
        extra = schema.get("additionalProperties", True)
        limit = schema.get("maxProperties", 1 << 30)
        if extra is not False and not shallow:
            sub = {} if extra is True else extra
            wanted = self.rng.choice([0, 0, 0, 1, 2, 3]) if props else self.rng.randint(0, 3)
            for _ in range(wanted):
                if len(out) >= limit:
                    break
                key = self.string(None, max_len=8)
                if key not in props and key not in out:
                    out[key] = self.value(sub, chain, depth + 1)
        return out

    def any_json(self, depth):
        kinds = ["null", "bool", "int", "num", "str"]
        if depth < MAX_DEPTH:
            kinds += ["arr", "obj"]
        kind = self.rng.choice(kinds)
        if kind == "null":
            return None
        if kind == "bool":
            return self.rng.random() < 0.5
        if kind == "int":
            return self.integer(None, None)
        if kind == "num":
            return self.number(None, None)
        if kind == "str":
            return self.string(None)
        if kind == "arr":
            return [self.any_json(depth + 1) for _ in range(self.rng.randint(0, 3))]
        return {self.string(None, max_len=6): self.any_json(depth + 1)
                for _ in range(self.rng.randint(0, 3))}

    # Characters a server's text can hold: ASCII, JSON escapes, controls, non-ASCII, non-BMP,
    # invisible ones. No unpaired surrogates (tests/it/json_passthrough.rs covers those).
    ALPHABET = (list("abcxyzABCXYZ0189 _-./:{}") + ['"', "\\", "\n", "\t", "\r", "\x00", "\x1f",
                "\x7f", "é", "ß", "漢", "ё", "\u2028", "\u200b", "\ufeff", "😀", "\U0010ffff"])

    def string(self, fmt, max_len=16):
        r = self.rng
        if fmt == "uri":
            return r.choice(["https://example.com/", "file:///tmp/", "fuzz://x/", "data:,"]) + \
                "".join(r.choice("abz09-_.~%2F") for _ in range(r.randint(0, 8)))
        if fmt == "uri-template":
            return r.choice(["file:///{path}", "fuzz://t/{id}", "https://e.example/{a}{?q}"])
        if fmt == "byte":
            return base64.b64encode(bytes(r.randrange(256) for _ in range(r.randint(0, 12)))).decode()
        return "".join(r.choice(self.ALPHABET) for _ in range(r.randint(0, max_len)))

    def integer(self, lo, hi):
        r = self.rng
        if lo is not None or hi is not None:
            lo = 0 if lo is None else int(lo)
            hi = lo + 10**6 if hi is None else int(hi)
            return r.choice([lo, hi, r.randint(lo, hi)])
        return r.choice([0, -1, 1, r.randint(-100, 100), r.randint(-2**31, 2**31),
                         r.randint(-2**53, 2**53), 2**63 - 1, -2**63])

    def number(self, lo, hi):
        r = self.rng
        if lo is not None and hi is not None:
            return r.choice([lo, hi, r.uniform(lo, hi)])
        return r.choice([0, 0.5, -1.25, 3.0, 1e-7, -2.5e300, r.uniform(-1e6, 1e6),
                         r.randint(-1000, 1000)])


# ---- validation -----------------------------------------------------------------------------

def validators(path, uri, defs):
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    registry = Registry().with_resource(uri, Resource.from_contents(doc, DRAFT202012))
    return {d: Draft202012Validator({"$ref": f"{uri}#/$defs/{d}"}, registry=registry)
            for d in defs}


def errors_of(validator, instance, limit=3):
    out = []
    for e in validator.iter_errors(instance):
        where = "/".join(str(p) for p in e.absolute_path)
        out.append(f"at /{where}: {e.message[:200]}")
        if len(out) >= limit:
            break
    return out


SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
SCHEMA_ONE = ("items", "additionalItems", "additionalProperties", "unevaluatedItems",
              "unevaluatedProperties", "not", "if", "then", "else", "contains", "propertyNames")
SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")


def schema_faults(schema, path, out):
    """The null members (other than const/default) and mis-typed properties/required of a tool
    schema at any depth: what the bridge's schema rules leave none of."""
    if not isinstance(schema, dict):
        return
    for key, value in schema.items():
        if value is None and key not in ("const", "default"):
            out.append(f"{path}/{key}: null")
    if "properties" in schema:
        props = schema["properties"]
        if not isinstance(props, dict) or any(not isinstance(v, dict) for v in props.values()):
            out.append(f"{path}/properties: not an object of objects")
    if "required" in schema and (not isinstance(schema["required"], list)
                                 or any(not isinstance(n, str) for n in schema["required"])):
        out.append(f"{path}/required: not an array of strings")
    for key in SCHEMA_MAPS:
        if isinstance(schema.get(key), dict):
            for name, sub in schema[key].items():
                if sub is None:
                    out.append(f"{path}/{key}/{name}: null")
                schema_faults(sub, f"{path}/{key}/{name}", out)
    for key in SCHEMA_ONE:
        sub = schema.get(key)
        if isinstance(sub, list) and key == "items":
            for i, s in enumerate(sub):
                if s is None:
                    out.append(f"{path}/items/{i}: null")
                schema_faults(s, f"{path}/items/{i}", out)
        else:
            schema_faults(sub, f"{path}/{key}", out)
    for key in SCHEMA_LISTS:
        if isinstance(schema.get(key), list):
            for i, s in enumerate(schema[key]):
                if s is None:
                    out.append(f"{path}/{key}/{i}: null")
                schema_faults(s, f"{path}/{key}/{i}", out)


# ---- the editor side ------------------------------------------------------------------------

class BridgeProcess:
    """The bridge over real pipes; a thread reads its stdout lines, another drains stderr."""

    def __init__(self, argv):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.lines = queue.Queue()
        self.stderr = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _drain(self):
        for line in self.proc.stderr:
            self.stderr.append(line.decode("utf-8", "replace"))
            del self.stderr[:-40]

    def send(self, msg):
        self.proc.stdin.write(json.dumps(msg, ensure_ascii=False).encode() + b"\n")

    def flush(self):
        self.proc.stdin.flush()

    def recv(self, deadline):
        """The next line (bytes), or None at the end of stdout or at the deadline."""
        try:
            return self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            return None

    def close(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            return self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


# ---- invalid list items, as servers in the wild send them -----------------------------------
# Each mutation turns a valid item into one that 2026-07-28 and 2025-11-25 both refuse, and says
# what the bridge must do with it: "keep" (it repairs it: a null optional member, a tool's
# missing/null/true inputSchema) or "drop" (no unambiguous repair). The bridge must keep every
# valid item in its order, drop exactly the "drop" ones and keep the "keep" ones.
ITEM_MEMBER = {"tools/list": "tools", "prompts/list": "prompts", "resources/list": "resources",
               "resources/templates/list": "resourceTemplates"}
ITEM_DEF = {"tools/list": "Tool", "prompts/list": "Prompt", "resources/list": "Resource",
            "resources/templates/list": "ResourceTemplate"}


def _set(key, value):
    return lambda item: {**item, key: value}


def _without(key):
    return lambda item: {k: v for k, v in item.items() if k != key}


BAD_ITEMS = {
    "Tool": [
        ("drop", _set("inputSchema", {"type": "array"})),
        ("drop", _set("inputSchema", {"type": ["object", "null"]})),
        ("drop", _set("inputSchema", {"anyOf": [{"type": "object"}]})),
        ("drop", _set("inputSchema", False)),
        ("drop", _without("name")),
        ("drop", _set("name", 5)),
        ("drop", _set("title", 5)),
        ("drop", _set("annotations", "x")),
        ("keep", _set("inputSchema", True)),
        ("keep", _set("inputSchema", None)),
        ("keep", _without("inputSchema")),
        ("keep", _set("annotations", None)),
        ("keep", _set("title", None)),
        ("keep", _set("_meta", None)),
    ],
    "Prompt": [
        ("drop", _without("name")),
        ("drop", _set("arguments", [{}])),
        ("drop", _set("title", 5)),
        ("keep", _set("description", None)),
        ("keep", _set("icons", None)),
    ],
    "Resource": [
        ("drop", _without("uri")),
        ("drop", _set("uri", 5)),
        ("drop", _set("size", "big")),
        ("keep", _set("annotations", None)),
        ("keep", _set("mimeType", None)),
    ],
    "ResourceTemplate": [
        ("drop", _without("uriTemplate")),
        ("drop", _set("uriTemplate", 3)),
        ("drop", _without("name")),
        ("keep", _set("title", None)),
        ("keep", _set("_meta", None)),
    ],
}


def add_bad_items(gen, method, result, rng):
    """Puts 1..MAX_BAD_ITEMS invalid items (mutations of freshly generated valid items) at
    random places of a list result; returns for each item of the list whether the editor must
    get it (True for the valid items and the repairable ones)."""
    items = result[ITEM_MEMBER[method]]
    expect = [True] * len(items)
    for _ in range(rng.randint(1, MAX_BAD_ITEMS)):
        base = gen.value(REF(ITEM_DEF[method]))
        outcome, mutate = rng.choice(BAD_ITEMS[ITEM_DEF[method]])
        at = rng.randint(0, len(items))
        items.insert(at, mutate(base))
        expect.insert(at, outcome == "keep")
    return expect


def make_cases(gen, v2026, counts, rng):
    """cases[method] = list of {"result"} | {"error"} | {"notFound"}; also the generator's
    failures (cases not valid under 2026-07-28)."""
    cases, bad = {}, []
    for method, (_, result_def, _) in METHODS.items():
        out = []
        for i in range(counts):
            roll = rng.random()
            if method == "resources/read" and roll < P_NOT_FOUND:
                out.append({"notFound": gen.string(None)})
                continue
            if roll < P_ERROR + P_NOT_FOUND:
                case = {"error": gen.value(REF("Error"))}
                problems = errors_of(v2026["Error"], case["error"])
            else:
                case = {"result": gen.value(REF(result_def))}
                problems = errors_of(v2026[result_def], case["result"])
                # After the check: the bad items are invalid 2026-07-28 on purpose.
                if method in ITEM_MEMBER and rng.random() < P_BAD_ITEMS:
                    case["expect"] = add_bad_items(gen, method, case["result"], rng)
            if problems:
                bad.append((method, i, case, problems))
            out.append(case)
        cases[method] = out
    return cases, bad


def check_frame(method, i, case, frame, v2025, params):
    """The failures of one response frame for one case (empty when it passes)."""
    faults = []
    if "result" in frame:
        faults += errors_of(v2025["JSONRPCResultResponse"], frame)
        faults += errors_of(v2025[METHODS[method][1]], frame["result"])
    else:
        faults += errors_of(v2025["JSONRPCErrorResponse"], frame)
    if "result" in case:
        if "result" not in frame:
            faults.append("a valid 2026-07-28 result reached the editor as an error")
            return faults
        member = METHODS[method][2]
        if member:
            sent = case["result"][member]
            expect = case.get("expect", [True] * len(sent))
            kept = [item for item, keep in zip(sent, expect) if keep]
            got = frame["result"].get(member, [])
            if len(got) != len(kept):
                faults.append(f"{member}: {len(sent)} sent, {len(kept)} expected "
                              f"({len(sent) - len(kept)} to drop), {len(got)} arrived")
            elif [i.get("name") for i in got] != [i.get("name") for i in kept]:
                faults.append(f"{member}: the names of the kept items differ or moved")
        if method == "tools/list":
            for t, tool in enumerate(frame["result"].get("tools", [])):
                for member_name in ("inputSchema", "outputSchema"):
                    schema_faults(tool.get(member_name), f"tools/{t}/{member_name}", faults)
    else:
        got = frame.get("error", {}).get("code")
        if "notFound" in case:
            want = -32002
            if frame.get("error", {}).get("data") != {"uri": params["uri"]}:
                faults.append("resource not found: data is not {uri}")
        else:
            sent = case["error"]["code"]
            want = -32603 if sent == -32042 else sent
        if got != want:
            faults.append(f"error code {got}, expected {want}")
    return faults


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bridge", default=os.environ.get(
        "MCP_BRIDGE_BIN", os.path.join(REPO, "target", "debug", "mcp-bridge")))
    env_seed = os.environ.get("SCHEMA_FUZZ_SEED", "")
    ap.add_argument("--seed", type=int, default=int(env_seed) if env_seed.isdigit() else DEFAULT_SEED,
                    help=f"seed of the generator (default {DEFAULT_SEED}, or SCHEMA_FUZZ_SEED)")
    ap.add_argument("--random-seed", action="store_true", default=env_seed == "random",
                    help="a new seed from the clock (also SCHEMA_FUZZ_SEED=random)")
    ap.add_argument("--count", type=int, default=DEFAULT_COUNT, help="cases per method")
    ap.add_argument("--keep", metavar="DIR", help="write the cases and failures into DIR")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every failure in full")
    args = ap.parse_args()
    seed = int(time.time() * 1000) % 2**32 if args.random_seed else args.seed
    started = time.monotonic()
    print(f"schema-fuzz: seed {seed}, {args.count} cases per method (rerun: --seed {seed})",
          flush=True)
    if not os.access(args.bridge, os.X_OK):
        print(f"schema-fuzz: bridge not found or not executable: {args.bridge}", file=sys.stderr)
        return 2
    try:
        with open(os.path.join(SCHEMAS, "schema-2026-07-28.json"), encoding="utf-8") as f:
            defs2026 = json.load(f)["$defs"]
        result_defs = [spec[1] for spec in METHODS.values()]
        v2026 = validators(os.path.join(SCHEMAS, "schema-2026-07-28.json"),
                           "urn:mcp:2026-07-28", result_defs + ["Error"])
        v2025 = validators(os.path.join(SCHEMAS_2025, "schema-2025-11-25.json"),
                           "urn:mcp:2025-11-25",
                           result_defs + ["JSONRPCResultResponse", "JSONRPCErrorResponse",
                                          "JSONRPCMessage", "InitializeResult"])
    except ImportError as e:
        print(f"schema-fuzz: {e} (use the interop venv: bash tests/interop/run.sh)",
              file=sys.stderr)
        return 2

    rng = random.Random(seed)
    gen = Generator(generation_defs(defs2026), rng)
    cases, bad = make_cases(gen, v2026, args.count, rng)
    generated_s = time.monotonic() - started
    workdir = args.keep or os.path.join("/tmp", f"schema-fuzz-{os.getpid()}")
    os.makedirs(workdir, exist_ok=True)
    cases_path = os.path.join(workdir, "cases.json")
    with open(cases_path, "w", encoding="utf-8") as f:
        json.dump(cases, f, ensure_ascii=False)

    failures = []  # (method, i, case, faults, frame)
    for method, i, case, problems in bad:
        failures.append((method, i, case, ["generator: not valid 2026-07-28: "] + problems, None))

    bridge = BridgeProcess([args.bridge, "--", sys.executable,
                            os.path.join(HERE, "fuzz_upstream.py"), cases_path])
    counts = {m: {"results": 0, "errors": 0} for m in METHODS}
    other_frames = 0
    try:
        bridge.send({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "schema-fuzz", "version": "1"}}})
        bridge.flush()
        line = bridge.recv(time.monotonic() + BATCH_TIMEOUT_S)
        init = json.loads(line) if line else None
        if not init or "result" not in init:
            print(f"schema-fuzz: initialize failed: {init}; stderr:\n{''.join(bridge.stderr)}",
                  file=sys.stderr)
            return 2
        bridge.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        work = [(m, i) for m in METHODS for i in range(args.count)]
        rng.shuffle(work)
        next_id = 0
        by_id = {}
        for start in range(0, len(work), IN_FLIGHT):
            batch = work[start:start + IN_FLIGHT]
            for method, i in batch:
                params = METHODS[method][0](i)
                by_id[next_id] = (method, i, params)
                bridge.send({"jsonrpc": "2.0", "id": next_id, "method": method, "params": params})
                next_id += 1
            bridge.flush()
            waiting = set(range(next_id - len(batch), next_id))
            deadline = time.monotonic() + BATCH_TIMEOUT_S
            while waiting:
                line = bridge.recv(deadline)
                if line is None:
                    raise RuntimeError(f"no answer to {len(waiting)} requests within "
                                       f"{BATCH_TIMEOUT_S} s (or the bridge ended)")
                frame = json.loads(line)
                if "id" not in frame or frame.get("id") not in waiting or "method" in frame:
                    other_frames += 1
                    faults = errors_of(v2025["JSONRPCMessage"], frame)
                    if faults:
                        failures.append(("(other frame)", None, None, faults, frame))
                    continue
                fid = frame["id"]
                waiting.discard(fid)
                method, i, params = by_id.pop(fid)
                case = cases[method][i]
                counts[method]["results" if "result" in frame else "errors"] += 1
                faults = check_frame(method, i, case, frame, v2025, params)
                if faults:
                    failures.append((method, i, case, faults, frame))
    except (RuntimeError, BrokenPipeError, json.JSONDecodeError) as e:
        print(f"schema-fuzz: {e}; bridge stderr (last lines):\n{''.join(bridge.stderr)}",
              file=sys.stderr)
        failures.append(("(run)", None, None, [str(e)], None))
    finally:
        status = bridge.close()

    total = len(METHODS) * args.count
    failed_cases = len({(m, i) for m, i, *_ in failures if i is not None})
    run_failures = [f for f in failures if f[1] is None]
    for m, c in counts.items():
        print(f"schema-fuzz: {m}: {c['results']} results, {c['errors']} errors")
    print(f"schema-fuzz: {other_frames} other frames; generation {generated_s:.1f} s, "
          f"total {time.monotonic() - started:.1f} s; bridge exit status {status}")
    for n, (method, i, case, faults, frame) in enumerate(failures):
        if n < SHOWN_FAILURES or args.verbose:
            # JSON string escapes keep control characters of generated names on one line.
            print(f"FAIL {method} case {i}: " + json.dumps("; ".join(faults))[1:-1][:4000])
            if case is not None:
                print(f"  sent:     {json.dumps(case, ensure_ascii=False)[:2000]}")
            if frame is not None:
                print(f"  received: {json.dumps(frame, ensure_ascii=False)[:2000]}")
    if args.keep:
        with open(os.path.join(workdir, "failures.json"), "w", encoding="utf-8") as f:
            json.dump([{"method": m, "case_index": i, "case": c, "faults": fl, "frame": fr}
                       for m, i, c, fl, fr in failures], f, ensure_ascii=False, indent=1)
    else:
        os.remove(cases_path)
        os.rmdir(workdir)
    failed = failed_cases + len(run_failures)
    print(f"schema-fuzz: {total - failed_cases} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
