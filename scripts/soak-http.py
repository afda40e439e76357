#!/usr/bin/env python3
"""Soak check of the URL form (not part of CI).

    python3 scripts/soak-http.py [--duration SECONDS] [--restart-every SECONDS]
                                 [--flip-every SECONDS] [--bridge PATH] [--json FILE]

Starts the HTTP upstream of the interop tests (tests/interop/upstream.py, PyPI mcp 2.3.0,
Streamable HTTP on a free loopback port; create its venv with `bash tests/interop/run.sh --http`
or `python3 -m venv tests/interop/.venv && tests/interop/.venv/bin/pip install -r
tests/interop/requirements.txt`) and `mcp-bridge http://127.0.0.1:PORT/mcp` (default
target/release/mcp-bridge) in front of it, and drives the bridge as a 2025-11-25 editor:

- one `tools/call echo` a second, each checked to be answered exactly once (an error of the
  error table is an answer; answers are counted by kind: ok, or the code and `data.cause`);
- every --flip-every seconds a `tools/call flip_tools`, whose `notifications/tools/list_changed`
  must reach the editor on the bridge's listen stream within FLIP_DEADLINE_S;
- every --restart-every seconds the upstream is stopped (SIGTERM) and started again on the same
  port; the listen stream is back when the next `notifications/tools/list_changed` arrives
  (the bridge's gap event after a new stream's acknowledgment), and the time from the
  upstream's port accepting again to it is recorded;
- the bridge's RSS (VmRSS of /proc/PID/status) every RSS_SAMPLE_S seconds.

Prints a progress line to stderr every minute, and a summary at the end (also written as JSON
with --json); SIGINT or SIGTERM ends the run early with the summary of what it saw so far
(`"stopped_early_at_s"`). Exit status 1 when a request was not
answered exactly once, a listen stream did not come back, or a list change outside a restart
did not arrive.
"""
import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CALL_INTERVAL_S = 1.0          # one echo call a second
FLIP_DEADLINE_S = 15.0         # a triggered list change must reach the editor within this
RECOVERY_DEADLINE_S = 90.0     # the listen stream must be back this long after the restart
RSS_SAMPLE_S = 5.0             # RSS sampling period
UPSTREAM_START_TIMEOUT_S = 30.0
UPSTREAM_STOP_GRACE_S = 5.0
DRAIN_TIMEOUT_S = 60.0         # wait for the last answers at the end
PROGRESS_S = 60.0              # progress line period


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def port_open(port):
    try:
        socket.create_connection(("127.0.0.1", port), 0.2).close()
        return True
    except OSError:
        return False


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            vals = {}
            for line in f:
                if line.startswith(("VmRSS:", "VmHWM:")):
                    k, v = line.split(":", 1)
                    vals[k] = int(v.split()[0])
            return vals
    except OSError:
        return {}


def pct(values, q):
    if not values:
        return None
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


class Upstream:
    def __init__(self, python, port, log):
        self.python, self.port, self.log = python, port, log
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen(
            [self.python, os.path.join(REPO, "tests/interop/upstream.py"), "http", str(self.port)],
            stdout=self.log, stderr=self.log, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + UPSTREAM_START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"upstream exited with {self.proc.returncode}")
            if port_open(self.port):
                return time.monotonic()
            time.sleep(0.05)
        raise RuntimeError("upstream did not open its port")

    def stop(self):
        if self.proc is None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(UPSTREAM_STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None


class Bridge:
    """The bridge on pipes; a reader thread records answers and list changes."""

    def __init__(self, cmd, err_log):
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=err_log, bufsize=0)
        self.lock = threading.Condition()
        self.answers = {}        # id -> list of (time, kind)
        self.list_changes = []   # monotonic times of notifications/tools/list_changed
        self.other_notes = {}
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def send(self, msg):
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()

    def _read(self):
        for raw in self.proc.stdout:
            now = time.monotonic()
            try:
                msg = json.loads(raw)
            except ValueError:
                continue
            with self.lock:
                if "id" in msg and ("result" in msg or "error" in msg):
                    self.answers.setdefault(msg["id"], []).append((now, classify(msg)))
                elif msg.get("method") == "notifications/tools/list_changed":
                    self.list_changes.append(now)
                elif "method" in msg:
                    self.other_notes[msg["method"]] = self.other_notes.get(msg["method"], 0) + 1
                self.lock.notify_all()

    def wait_answer(self, rid, timeout):
        deadline = time.monotonic() + timeout
        with self.lock:
            while rid not in self.answers:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.lock.wait(left)
            return self.answers[rid][0]


def classify(msg):
    if "error" in msg:
        err = msg["error"] or {}
        data = err.get("data") if isinstance(err.get("data"), dict) else {}
        detail = str(data.get("detail", ""))
        # keep the kind of a transport failure (HTTP status / connection) without OS details
        if detail.startswith("HTTP "):
            detail = detail.split(":")[0]
        elif detail:
            detail = detail.split(":")[0]
        return f"error {err.get('code')} {data.get('cause', '-')} {detail}".strip()
    result = msg.get("result") or {}
    return "tool_error" if result.get("isError") else "ok"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--duration", type=float, default=1800, help="seconds (default 1800)")
    ap.add_argument("--restart-every", type=float, default=300, help="seconds (default 300)")
    ap.add_argument("--flip-every", type=float, default=30, help="seconds between triggered list changes (default 30)")
    ap.add_argument("--bridge", default=os.path.join(REPO, "target/release/mcp-bridge"))
    ap.add_argument("--python", default=os.path.join(REPO, "tests/interop/.venv/bin/python"))
    ap.add_argument("--logs", default="/tmp/soak-http", help="directory for the bridge's and upstream's stderr")
    ap.add_argument("--json", help="write the summary here")
    args = ap.parse_args()

    os.makedirs(args.logs, exist_ok=True)
    port = free_port()
    up_log = open(os.path.join(args.logs, "upstream.log"), "ab")
    br_log = open(os.path.join(args.logs, "bridge.log"), "ab")
    upstream = Upstream(args.python, port, up_log)
    upstream.start()
    bridge = Bridge([args.bridge, f"http://127.0.0.1:{port}/mcp"], br_log)
    pid = bridge.proc.pid

    bridge.send({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "soak-http", "version": "1"}}})
    init = bridge.wait_answer("init", 30)
    if init is None or init[1] != "ok":
        print(f"soak: initialize failed: {init}", file=sys.stderr)
        bridge.proc.kill()
        upstream.stop()
        return 1
    bridge.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    t0 = time.monotonic()
    sent = {}              # id -> (time, tool)
    rss = []               # (seconds since start, VmRSS KiB)
    restarts = []          # dicts
    flips = []             # dicts: sent, delivered latency or None, during_restart
    state = {"restart": None}   # the restart in progress
    next_id = 1
    next_flip = t0 + args.flip_every
    next_restart = t0 + args.restart_every
    next_rss = t0
    pending_flip = None
    restarter = None

    def do_restart(rec):
        rec["stop_at"] = time.monotonic() - t0
        upstream.stop()
        rec["up_at"] = upstream.start() - t0

    stop = {"early": None}

    def on_signal(signum, frame):
        stop["early"] = round(time.monotonic() - t0, 1)

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    next_progress = t0 + PROGRESS_S
    tick = t0
    while True:
        now = time.monotonic()
        if now - t0 >= args.duration or stop["early"] is not None:
            break
        if now >= next_progress:
            with bridge.lock:
                n_ans = sum(1 for r in sent if r in bridge.answers)
                n_lc = len(bridge.list_changes)
            print(f"soak: {now - t0:.0f} s: {len(sent)} requests, {n_ans} answered, "
                  f"{len(restarts)} restarts done, {n_lc} list changes, "
                  f"RSS {rss[-1][1] if rss else '?'} KiB", file=sys.stderr, flush=True)
            next_progress += PROGRESS_S
        if now >= next_rss:
            v = rss_kib(pid)
            if "VmRSS" in v:
                rss.append((round(now - t0, 1), v["VmRSS"]))
            next_rss += RSS_SAMPLE_S
        # one echo a second
        rid = next_id
        next_id += 1
        sent[rid] = (now, "echo")
        bridge.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                     "params": {"name": "echo", "arguments": {"message": f"soak {rid}"}}})
        # the restart in progress: done when the next list change after the port is back arrives
        rec = state["restart"]
        if rec is not None and "up_at" in rec:
            with bridge.lock:
                later = [t - t0 for t in bridge.list_changes if t - t0 > rec["up_at"]]
            if later:
                rec["listen_back_s"] = round(later[0] - rec["up_at"], 3)
                state["restart"] = None
                restarts.append(rec)
            elif now - t0 - rec["up_at"] > RECOVERY_DEADLINE_S:
                rec["listen_back_s"] = None
                state["restart"] = None
                restarts.append(rec)
        # a triggered list change
        if pending_flip is not None:
            with bridge.lock:
                got = [t for t in bridge.list_changes if t > pending_flip["t"]]
            if got:
                pending_flip["latency_s"] = round(got[0] - pending_flip["t"], 3)
                flips.append(pending_flip)
                pending_flip = None
            elif now - pending_flip["t"] > FLIP_DEADLINE_S:
                pending_flip["latency_s"] = None
                flips.append(pending_flip)
                pending_flip = None
        if pending_flip is None and now >= next_flip:
            rid = next_id
            next_id += 1
            sent[rid] = (now, "flip_tools")
            pending_flip = {"at": round(now - t0, 1), "t": now, "id": rid,
                            "during_restart": state["restart"] is not None}
            bridge.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                         "params": {"name": "flip_tools", "arguments": {}}})
            next_flip = now + args.flip_every
        if state["restart"] is None and now >= next_restart:
            rec = {"n": len(restarts) + 1}
            state["restart"] = rec
            restarter = threading.Thread(target=do_restart, args=(rec,), daemon=True)
            restarter.start()
            next_restart += args.restart_every
        # a flip whose notification may have been lost by a restart is not a failure
        if pending_flip is not None and state["restart"] is not None:
            pending_flip["during_restart"] = True
        tick += CALL_INTERVAL_S
        time.sleep(max(0.0, tick - time.monotonic()))

    if pending_flip is not None:
        pending_flip["latency_s"] = None
        flips.append(pending_flip)
    if restarter is not None:
        restarter.join()
    if state["restart"] is not None:
        restarts.append(state["restart"])
    # drain: every request answered
    deadline = time.monotonic() + DRAIN_TIMEOUT_S
    while time.monotonic() < deadline:
        with bridge.lock:
            if all(r in bridge.answers for r in sent):
                break
        time.sleep(0.2)
    v = rss_kib(pid)
    bridge.proc.stdin.close()
    try:
        bridge.proc.wait(10)
    except subprocess.TimeoutExpired:
        bridge.proc.kill()
    upstream.stop()

    with bridge.lock:
        answers = dict(bridge.answers)
    kinds = {}
    latencies = []
    for r, (ts, tool) in sent.items():
        for (ta, kind) in answers.get(r, []):
            kinds[kind] = kinds.get(kind, 0) + 1
            if kind == "ok" and tool == "echo":
                latencies.append((ta - ts) * 1000)
    unanswered = [r for r in sent if r not in answers]
    duplicated = [r for r in sent if len(answers.get(r, [])) > 1]
    rss_vals = [k for (_, k) in rss]
    seg = {}
    for (t, k) in rss:
        seg.setdefault(int(t // args.restart_every), []).append(k)
    flips_missed = [f for f in flips if f["latency_s"] is None and not f["during_restart"]]
    flips_lost_in_restart = [f for f in flips if f["latency_s"] is None and f["during_restart"]]
    flip_lat = [f["latency_s"] for f in flips
                if f["latency_s"] is not None and not f["during_restart"]]
    summary = {
        "duration_s": args.duration, "stopped_early_at_s": stop["early"], "restart_every_s": args.restart_every,
        "flip_every_s": args.flip_every,
        "requests": len(sent), "answered": sum(1 for r in sent if r in answers),
        "unanswered": len(unanswered), "answered_more_than_once": len(duplicated),
        "answers_by_kind": kinds,
        "echo_ok_latency_ms": {"median": round(statistics.median(latencies), 2) if latencies else None,
                               "p99": round(pct(latencies, 0.99), 2) if latencies else None,
                               "max": round(max(latencies), 2) if latencies else None},
        "restarts": restarts,
        "listen_recoveries": sum(1 for r in restarts if r.get("listen_back_s") is not None),
        "list_changes_received": len(bridge.list_changes),
        "flips": len(flips), "flips_delivered_outside_restart": len(flip_lat),
        "flips_in_restart_window": sum(1 for f in flips if f["during_restart"]),
        "flips_missed_outside_restart": len(flips_missed),
        "flips_lost_in_restart_window": len(flips_lost_in_restart),
        "flip_latency_s": {"median": statistics.median(flip_lat) if flip_lat else None,
                           "max": max(flip_lat) if flip_lat else None},
        "rss_kib": {"samples": len(rss_vals), "min": min(rss_vals) if rss_vals else None,
                    "median": statistics.median(rss_vals) if rss_vals else None,
                    "max": max(rss_vals) if rss_vals else None,
                    "hwm_at_end": v.get("VmHWM"),
                    "median_per_restart_interval": [statistics.median(seg[i]) for i in sorted(seg)]},
        "bridge_exit": bridge.proc.returncode,
        "other_notifications": bridge.other_notes,
    }
    ok = (not unanswered and not duplicated and not flips_missed
          and all(r.get("listen_back_s") is not None for r in restarts))
    summary["verdict"] = "pass" if ok else "FAIL"
    text = json.dumps(summary, indent=1)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
