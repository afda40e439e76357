#!/usr/bin/env python3
"""The bridge's own CPU per large call: starts `BRIDGE -- SERVER --test-tools` (SERVER is
mcp-fixture-server), initializes, makes one untimed call, then N calls, and prints the CPU
milliseconds per call (user + system of every thread of the bridge, from /proc), a figure
the machine's load disturbs far less than the latency, and the bridge's minor page faults
per call (field 10 of /proc/PID/stat: every thread, exited ones included), which it
does not disturb at all.

  python3 scripts/bench/cpu-per-call.py BRIDGE SERVER result|each BYTES N
    result: tools/call large_text {"bytes": BYTES} (a small request, a large result)
    each:   tools/call echo with BYTES of text (request and result each BYTES)
"""
import json, subprocess, sys, os
b, srv, mode, nbytes, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
p = subprocess.Popen([b, "--", srv, "--test-tools"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=1<<20)
def send(m): p.stdin.write((json.dumps(m)+"\n").encode()); p.stdin.flush()
def recv(i):
    while True:
        m = json.loads(p.stdout.readline())
        if m.get("id") == i: return m
def cpu():
    tot = 0
    for t in os.listdir(f"/proc/{p.pid}/task"):
        f = open(f"/proc/{p.pid}/task/{t}/stat").read().rsplit(")", 1)[1].split()
        tot += int(f[11]) + int(f[12])
    return tot / os.sysconf("SC_CLK_TCK")
def minflt():
    # Fields after the command: the state is field 3, minflt field 10.
    return int(open(f"/proc/{p.pid}/stat").read().rsplit(")", 1)[1].split()[7])
send({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"p","version":"1"}}})
recv(0); send({"jsonrpc":"2.0","method":"notifications/initialized"})
if mode == "result":
    params = {"name":"large_text","arguments":{"bytes":nbytes}}
else:
    params = {"name":"echo","arguments":{"text":"x"*nbytes}}
send({"jsonrpc":"2.0","id":1,"method":"tools/call","params":params}); recv(1)
c0, f0 = cpu(), minflt()
for i in range(2, 2+n):
    send({"jsonrpc":"2.0","id":i,"method":"tools/call","params":params}); recv(i)
c1, f1 = cpu(), minflt()
print(f"{(c1-c0)/n*1000:.1f} ms/call, {(f1-f0)/n:.0f} minor faults/call")
p.stdin.close(); p.wait()
