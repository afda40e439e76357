#!/usr/bin/env python3
"""Logging stdio pass-through, to see what the bridge sends to its upstream.

  python tap.py LOGFILE [--] CMD [ARGS...]

Runs CMD, copies our stdin to its stdin and its stdout to our stdout unchanged,
and appends every line to LOGFILE as `<monotonic time> C> <line>` (towards CMD)
or `S> <line>` (from CMD). CMD's stderr passes through. run.sh puts it between
the bridge and upstream.py when INTEROP_TAP=LOGFILE is set. Stdlib only.
"""
import subprocess
import sys
import threading
import time


def main() -> int:
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    log_path, cmd = sys.argv[1], sys.argv[2:]
    if cmd[:1] == ["--"]:
        cmd = cmd[1:]
    if not cmd:
        raise SystemExit(__doc__)
    log = open(log_path, "a", buffering=1, encoding="utf-8")
    lock = threading.Lock()
    child = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)

    def note(tag: str, line: bytes) -> None:
        with lock:
            log.write(f"{time.monotonic():.6f} {tag} {line.decode('utf-8', 'replace').rstrip()}\n")

    def to_child() -> None:
        for line in sys.stdin.buffer:
            note("C>", line)
            try:
                child.stdin.write(line)
                child.stdin.flush()
            except BrokenPipeError:
                break
        note("--", b"(stdin closed)")
        try:
            child.stdin.close()
        except BrokenPipeError:
            pass

    threading.Thread(target=to_child, daemon=True).start()
    for line in child.stdout:
        note("S>", line)
        try:
            sys.stdout.buffer.write(line)
            sys.stdout.buffer.flush()
        except BrokenPipeError:
            break
    rc = child.wait()
    note("--", f"(exit {rc})".encode())
    return rc


if __name__ == "__main__":
    sys.exit(main())
