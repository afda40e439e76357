#!/usr/bin/env python3
"""The server API over HTTP against other servers: calls per second and latency of a small
`tools/call` at several client counts, the arms interleaved in one run (docs/performance.md,
"The server API over HTTP, against rmcp").

Each arm is a server command that takes `--http 127.0.0.1:0` (appended here) and prints
`listening on http://...` on stderr: examples/embedded, tests/interop/rmcp's server with the
feature `http`, or any other. Every round starts each arm anew (the order alternates from round
to round), and for each client count runs the one load generator (scripts/bench/http-load: N
keep-alive connections, each doing one call after another, a warm-up, then a fixed window)
while holding the machine-wide build lock (/work/.cargo.lock when it exists), so that no build
runs beside a measurement. Besides the load generator's figures, it reads the server's CPU
time (/proc/PID/stat) around each run: the server's CPU per call, which the load hardly moves,
and its VmHWM at the end.

  python3 scripts/bench/http-serve.py [--rounds 5] [--clients 1,64] [--secs 3] [--warmup-secs 0.5]
      [--load PATH] [--one-cpu] [--target NAME --against NAME] NAME[@PROTOCOL]=COMMAND ...

With --one-cpu, every run holds the server (each of its threads) and the load generator on
CPU 0. At 1 client a call is a chain of wake-ups between the two processes, and on this VM
a wake-up across vCPUs costs tens of microseconds more than one on the same vCPU: unpinned,
where the scheduler happens to place the two decides a run's figures more than the servers
do (the same binary: 42 us or 120 us median from run to run). Pinned, every arm pays the
same switch on one CPU, and the figures compare the servers' own paths.

PROTOCOL is the one the load generator speaks to that arm (its --protocol: 2026-07-28 POSTs,
the default, or 2025-11-25 with a session). Prints one JSON line per run, then a Markdown
table of the medians over the rounds (runs in brackets), and with --target/--against whether
the target of docs/performance.md is met: at least the other arm's calls/s and a median
latency within 10 % of its.
"""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import time

from http_arm import Lock, cpu_secs, start, status_kib

# The target of docs/performance.md: a median latency within 10 % of the other server's.
MEDIAN_MARGIN = 1.10


# The CPU of --one-cpu.
ONE_CPU = {0}


def hold_on(pid, cpus):
    """Holds every thread of process `pid` on `cpus` (threads started later inherit it)."""
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            os.sched_setaffinity(int(tid), cpus)
        except ProcessLookupError:
            pass


def hold_load_generator():
    """Holds the load generator (run in its child before exec) on ONE_CPU."""
    os.sched_setaffinity(0, ONE_CPU)


def run_arm(name, protocol, command, args, rnd):
    rows = []
    with Lock():
        proc, url = start(command, "http-serve")
        pin = None
        if args.one_cpu:
            hold_on(proc.pid, ONE_CPU)
            pin = hold_load_generator
        try:
            for clients in args.clients:
                load = os.getloadavg()[0]
                before = cpu_secs(proc.pid)
                out = subprocess.run([args.load, url, "--clients", str(clients), "--secs", str(args.secs),
                                      "--warmup-secs", str(args.warmup_secs), "--protocol", protocol],
                                     capture_output=True, text=True, preexec_fn=pin)
                if out.returncode != 0:
                    raise SystemExit(f"http-serve: {name}: {out.stderr.strip()}")
                row = json.loads(out.stdout)
                row["server_cpu_us_per_call"] = round((cpu_secs(proc.pid) - before) * 1e6 / row["all_calls"], 1)
                row.update(arm=name, round=rnd, load1=round(load, 2))
                rows.append(row)
                print(json.dumps(row), flush=True)
            for row in rows:
                row["vm_hwm_kib"] = status_kib(proc.pid, "VmHWM")
        finally:
            proc.terminate()
            proc.wait()
    return rows


def fmt(values, digits):
    med = statistics.median(values)
    runs = ", ".join(f"{v:.{digits}f}" for v in values)
    return f"**{med:.{digits}f}** ({runs})"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--clients", default="1,64", help="client counts, comma-separated")
    p.add_argument("--secs", type=float, default=3.0, help="the measured window of each run")
    p.add_argument("--warmup-secs", type=float, default=0.5)
    p.add_argument("--load", default=os.path.join(os.environ.get("CARGO_TARGET_DIR", "target"),
                                                  "http-load/release/http-load"),
                   help="the load generator (scripts/bench/http-load, built in release)")
    p.add_argument("--one-cpu", action="store_true",
                   help="hold each server and the load generator on CPU 0 (see above)")
    p.add_argument("--target", help="the arm that has to meet the target")
    p.add_argument("--against", help="the arm it is compared with")
    p.add_argument("arms", nargs="+", metavar="NAME[@PROTOCOL]=COMMAND")
    args = p.parse_args()
    args.clients = [int(c) for c in args.clients.split(",")]
    arms = []
    for spec in args.arms:
        name, _, command = spec.partition("=")
        name, _, protocol = name.partition("@")
        if not command:
            raise SystemExit(f"http-serve: an arm is NAME[@PROTOCOL]=COMMAND, not {spec!r}")
        arms.append((name, protocol or "2026-07-28", shlex.split(command)))
    print(f"### {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())} load "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    rows = []
    for rnd in range(1, args.rounds + 1):
        order = arms if rnd % 2 else list(reversed(arms))
        for name, protocol, command in order:
            rows.extend(run_arm(name, protocol, command, args, rnd))
    loads = [r["load1"] for r in rows]
    print(f"\n{args.rounds} rounds, {args.secs} s each run after {args.warmup_secs} s of warm-up, "
          f"load {min(loads):.1f}-{max(loads):.1f}"
          f"{', each server and the load generator on CPU 0' if args.one_cpu else ''}\n")
    print("| arm | clients | calls/s | median (us) | p90 (us) | server CPU per call (us) | client CPU share | server VmHWM (KiB) |")
    print("|---|---|---|---|---|---|---|---|")
    medians = {}
    for clients in args.clients:
        for name, _, _ in arms:
            rs = [r for r in rows if r["arm"] == name and r["clients"] == clients]
            medians[(name, clients)] = (statistics.median(r["calls_per_s"] for r in rs),
                                        statistics.median(r["median_us"] for r in rs))
            share = [r["client_cpu_s"] / (r["secs"] + args.warmup_secs) for r in rs]
            print(f"| {name} | {clients} | {fmt([r['calls_per_s'] for r in rs], 0)} "
                  f"| {fmt([r['median_us'] for r in rs], 0)} | {fmt([r['p90_us'] for r in rs], 0)} "
                  f"| {fmt([r['server_cpu_us_per_call'] for r in rs], 1)} | {statistics.median(share):.2f} "
                  f"| {statistics.median(r['vm_hwm_kib'] for r in rs):.0f} |")
    if args.target and args.against:
        print()
        for clients in args.clients:
            (tput, med), (their_tput, their_med) = medians[(args.target, clients)], medians[(args.against, clients)]
            ok_t = tput >= their_tput
            ok_m = med <= MEDIAN_MARGIN * their_med
            print(f"{clients} clients: {args.target} {tput:.0f} calls/s = {tput / their_tput:.2f}x "
                  f"{args.against}'s ({'met' if ok_t else 'NOT met'}); median {med:.0f} us = "
                  f"{med / their_med:.2f}x ({'met' if ok_m else 'NOT met'}: within {MEDIAN_MARGIN:.2f}x)")


if __name__ == "__main__":
    main()
