"""A scripted debug adapter for mcp-dap's tests: it speaks DAP on stdin and stdout and sends
the sequences a real adapter cannot be made to send on demand. Its command line says what
comes before `launch`:

- `--no-initialized`: the `initialize` response comes without the `initialized` event, and
  no `initialized` event comes later (a program that ends before its configuration, an
  adapter that never starts it).

Its `launch` arguments say what it does then:

- `threads`: the threads, `[[id, name], ...]` (default `[[1, "main"]]`).
- `after_launch`: the events it sends after the `launch` response.
- `after_configuration`: the events it sends after the `configurationDone` response.
- `oversized_reference`, `oversized_bytes`: a `variables` request of that reference gets a
  response of that many bytes, its `body` first and its `request_seq` after it (lldb-dap's
  order: members sorted by name).
- `verify_after_set`: each `setBreakpoints` response is followed at once by a `breakpoint`
  event that says the breakpoint is verified.
- `all_threads_continued`: the `allThreadsContinued` of its `continue` responses.
- `silent_launch`: the `launch` request is never answered (its `initialized` event came
  with the `initialize` response).
- `grandchild_report`: a folder; at `launch` it starts `sleep 1000` (in its own process
  group, which the adapter's start gave it) and writes an empty file named `<its process
  group>.<the sleep's pid>` there.
- `ignore_end`: `disconnect` and `terminate` are never answered.
- `steps_never_stop`: `next`, `stepIn` and `stepOut` are answered, and no `stopped` event
  follows (a step into code that never returns).
- `variables`: `{"REFERENCE": [Variable, ...]}`: a `variables` request of a reference listed
  gets its page of that list (DAP `start` and `count`; the whole list from `start` without
  `count`).

An `evaluate` whose expression is a JSON list of events sends them after its response, so a
test sends any event when it wants. A thread's stack is one frame: id `100 * thread`, name
`f{thread}`, line `10 * thread`.
"""

import json
import os
import subprocess
import sys

out = sys.stdout.buffer
inp = sys.stdin.buffer
seq = 0
config = {}
no_initialized = "--no-initialized" in sys.argv[1:]


def write(message):
    global seq
    seq += 1
    message["seq"] = seq
    body = json.dumps(message).encode()
    out.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    out.flush()


def event(name, body=None):
    message = {"type": "event", "event": name}
    if body is not None:
        message["body"] = body
    write(message)


def respond(request, body=None, success=True):
    write({"type": "response", "request_seq": request["seq"], "success": success,
           "command": request["command"], "body": body or {}})


def oversized(request, size):
    global seq
    seq += 1
    head = b'{"body":{"variables":[{"name":"big","value":"'
    tail = ('"}]},"command":"variables","request_seq":%d,"seq":%d,"success":true,'
            '"type":"response"}' % (request["seq"], seq)).encode()
    filler = size - len(head) - len(tail)
    out.write(b"Content-Length: %d\r\n\r\n" % size + head)
    chunk = b"x" * (1 << 20)
    while filler > 0:
        out.write(chunk[:filler])
        filler -= len(chunk)
    out.write(tail)
    out.flush()


def read():
    header = b""
    while not header.endswith(b"\r\n\r\n"):
        byte = inp.read(1)
        if not byte:
            return None
        header += byte
    length = 0
    for line in header.decode().split("\r\n"):
        if line.lower().startswith("content-length:"):
            length = int(line.split(":", 1)[1])
    return json.loads(inp.read(length))


def handle(request):
    command = request["command"]
    arguments = request.get("arguments") or {}
    if command == "initialize":
        respond(request, {"supportsConfigurationDoneRequest": True})
        if not no_initialized:
            event("initialized")
    elif command == "launch":
        config.update(arguments)
        report = config.get("grandchild_report")
        if report:
            sleep = subprocess.Popen(["sleep", "1000"])
            open(os.path.join(report, "%d.%d" % (os.getpgrp(), sleep.pid)), "w").close()
        if not config.get("silent_launch"):
            respond(request)
            for message in config.get("after_launch", []):
                event(message["event"], message.get("body"))
    elif command in ("disconnect", "terminate") and config.get("ignore_end"):
        pass
    elif command == "configurationDone":
        respond(request)
        for message in config.get("after_configuration", []):
            event(message["event"], message.get("body"))
    elif command == "threads":
        threads = config.get("threads", [[1, "main"]])
        respond(request, {"threads": [{"id": i, "name": n} for i, n in threads]})
    elif command == "stackTrace":
        thread = arguments["threadId"]
        respond(request, {"stackFrames": [{"id": 100 * thread, "name": "f%d" % thread,
                                           "line": 10 * thread, "column": 1,
                                           "source": {"path": "/scripted/prog.c"}}],
                          "totalFrames": 1})
    elif command == "scopes":
        respond(request, {"scopes": [{"name": "Locals", "variablesReference": 1,
                                      "expensive": False}]})
    elif command == "variables":
        reference = arguments.get("variablesReference")
        listed = config.get("variables", {}).get(str(reference))
        if reference == config.get("oversized_reference"):
            oversized(request, config.get("oversized_bytes", 17 << 20))
        elif listed is not None:
            start = arguments.get("start", 0)
            count = arguments.get("count") or len(listed)
            respond(request, {"variables": listed[start:start + count]})
        else:
            respond(request, {"variables": [{"name": "n", "value": "1",
                                             "variablesReference": 0}]})
    elif command == "setBreakpoints":
        lines = [b["line"] for b in arguments.get("breakpoints", [])]
        path = arguments["source"]["path"]
        set_ = [{"id": 100 + i, "verified": False, "line": line}
                for i, line in enumerate(lines)]
        respond(request, {"breakpoints": set_})
        if config.get("verify_after_set"):
            for b in set_:
                event("breakpoint", {"reason": "changed", "breakpoint": {
                    "id": b["id"], "verified": True, "line": b["line"],
                    "source": {"path": path}}})
    elif command == "evaluate":
        events = json.loads(arguments["expression"])
        respond(request, {"result": "sent %d" % len(events), "variablesReference": 0})
        for message in events:
            event(message["event"], message.get("body"))
    elif command == "continue":
        respond(request, {"allThreadsContinued": config.get("all_threads_continued", True)})
    elif command in ("next", "stepIn", "stepOut"):
        respond(request)
        if not config.get("steps_never_stop"):
            event("stopped", {"reason": "step", "threadId": arguments["threadId"]})
    elif command == "pause":
        respond(request)
        event("stopped", {"reason": "pause", "threadId": arguments["threadId"]})
    elif command == "terminate":
        respond(request)
        event("terminated")
    elif command == "disconnect":
        respond(request)
        return False
    else:
        respond(request)
    return True


def main():
    while True:
        request = read()
        if request is None or not handle(request):
            return


main()
