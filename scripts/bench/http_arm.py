"""What the HTTP benchmarks (http-serve.py, http-idle-sessions.py) share: an arm's server started
on a free port, the machine-wide build lock, and the server's counters in /proc."""
import fcntl
import os
import re
import subprocess
import threading
import time

LOCK = "/work/.cargo.lock"
TICKS = os.sysconf("SC_CLK_TCK")
START_TIME_LIMIT_S = 10


def cpu_secs(pid):
    """The user and system CPU time of the process, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def status_kib(pid, field):
    """A field of /proc/PID/status in KiB (VmRSS, VmHWM)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def start(command, who):
    """Starts `command --http 127.0.0.1:0` and returns (process, URL) once it printed its
    `listening on http://...` line."""
    proc = subprocess.Popen(command + ["--http", "127.0.0.1:0"], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + START_TIME_LIMIT_S
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        m = re.search(r"listening on (http://\S+)", line)
        if m:
            # The rest of stderr is drained, so that a server that logs never blocks on it.
            threading.Thread(target=proc.stderr.read, daemon=True).start()
            return proc, m.group(1)
    proc.kill()
    raise SystemExit(f"{who}: {command[0]} printed no 'listening on http://...' line")


class Lock:
    """The machine-wide build lock, if there is one: no build runs beside a measurement."""

    def __enter__(self):
        self.f = open(LOCK) if os.path.exists(LOCK) else None
        if self.f:
            fcntl.flock(self.f, fcntl.LOCK_EX)

    def __exit__(self, *_):
        if self.f:
            self.f.close()
