#!/usr/bin/env python3
"""The host's figures, each the median of RUNS runs (min-max), against its anchor in the same go.

1. Host CPU per minute with 10 hosted apps idle (foreground, `sleep`), from its threads'
   schedstat, read ten times a second.
2. Freeze and thaw latency per freezer: 40 background/foreground cycles of a heartbeat app with
   nothing keeping it alive; the kernel part the host reports (write to frozen, or all stopped)
   and the whole of it, from the compositor's request to the host's event.
3. The hosted hybrid app (`keepalive run --host`, always, a poll every 10 s) in the background,
   against `keepalive watch` on the same replay at 1 Hz hosted in the foreground: each its
   cgroup's own CPU count (cgroup v2 cpu.stat, microseconds), per minute.

    python3 Benchmarks/host_bench.py KEEPALIVE RUNS SECONDS
"""
import datetime, json, os, statistics, subprocess, sys, tempfile, time

keepalive, runs, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
log = os.path.abspath("Mocks/Fixtures/nmea/ublox-8.log")


def thread_cpu(pid):
    """CPU nanoseconds of each live thread of a process (/proc/PID/task/*/schedstat)."""
    times = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                times[task] = int(f.read().split()[0])
        except OSError:
            pass
    return times


def cpu_during(pid, seconds):
    """CPU seconds a process used over the next `seconds`, to the nanosecond: its threads read
    ten times a second, so a thread that ends in the window keeps what it used until its last
    reading (summing the live threads at both ends lost it: the idle figure once came out
    negative)."""
    start = thread_cpu(pid)
    last = dict(start)
    end = time.time() + seconds
    while time.time() < end:
        time.sleep(0.1)
        last.update(thread_cpu(pid))
    return sum(used - start.get(task, 0) for task, used in last.items()) / 1e9


class Host:
    def __init__(self, work, freezer="cgroup2", extra=()):
        self.socket = os.path.join(work, f"host-{freezer}-{time.monotonic_ns()}.sock")
        name = f"keepalive.bench-{os.getpid()}-{time.monotonic_ns()}"
        self.process = subprocess.Popen(
            # Apps as root, on purpose: the hosted service reads the bench's own (root's) files.
            [keepalive, "host", "--socket", self.socket, "--freezer", freezer, "--name", name, "--json",
             "--app-user", "root", "--allow-root-apps", *extra],
            stdout=subprocess.PIPE, text=True, env=dict(os.environ, XDG_CONFIG_HOME=work))
        while not os.path.exists(self.socket):
            time.sleep(0.01)
        self.events = []

    def ctl(self, command, *args):
        subprocess.run([keepalive, "host", command, "--socket", self.socket, *args], check=True,
                       stdout=subprocess.DEVNULL)

    def stop(self):
        self.process.terminate()
        out, _ = self.process.communicate(timeout=30)
        return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def median_range(values, unit, scale=1.0):
    values = [v * scale for v in values]
    return f"{statistics.median(values):.3f} {unit} ({min(values):.3f}-{max(values):.3f})"


def idle_host(work):
    host = Host(work)
    for i in range(10):
        host.ctl("launch", "--app", f"idle{i}", "--", "sleep", "3600")
    time.sleep(1)
    used = cpu_during(host.process.pid, seconds)
    host.stop()
    return used * 60 / seconds * 1000  # ms per minute


def latencies(work, freezer):
    host = Host(work, freezer, ["--policy", "ios13"])
    beat = os.path.join(work, "beat")
    host.ctl("launch", "--app", "beat", "--", "sh", "-c", f"while :; do date +%s%N >> {beat}; sleep 0.1; done")
    time.sleep(0.5)
    requests = []
    for _ in range(40):
        t = time.time()
        host.ctl("background", "--app", "beat")
        requests.append(("frozen", t))
        time.sleep(0.15)
        t = time.time()
        host.ctl("foreground", "--app", "beat")
        requests.append(("thawed", t))
        time.sleep(0.15)
    events = host.stop()
    kernel = {"frozen": [], "thawed": []}
    whole = {"frozen": [], "thawed": []}
    stamps = {"frozen": [], "thawed": []}
    for e in events:
        if e.get("event") in kernel and e.get("app") == "beat":
            kernel[e["event"]].append(e["latency"] * 1000)
            stamps[e["event"]].append(datetime.datetime.fromisoformat(e["time"].replace("Z", "+00:00")).timestamp())
    for kind in whole:
        asked = [t for k, t in requests if k == kind]
        whole[kind] = [(s - a) * 1000 for s, a in zip(stamps[kind], asked)]
    return kernel, whole


def hosted_cpu_per_minute(host, app):
    status = lambda: json.loads(subprocess.run(
        [keepalive, "host", "status", "--socket", host.socket, "--app", app, "--json"],
        check=True, capture_output=True, text=True).stdout)["cpu"]
    start = status()
    time.sleep(seconds)
    return (status() - start) * 60 / seconds * 1000


def hosted(work, app, command, background):
    """An app under a host (cgroup v2), its CPU per minute after it settled."""
    host = Host(work, "cgroup2", ["--policy", "ios13", "--budget", "2s"])
    subprocess.run([keepalive, "auth", "set", "always", "--app", app], check=True, stdout=subprocess.DEVNULL,
                   env=dict(os.environ, XDG_CONFIG_HOME=work))
    host.ctl("launch", "--app", app, "--modes", "audio,location", "--output", os.path.join(work, app + ".out"),
             "--", *command)
    time.sleep(1)
    if background:
        host.ctl("background", "--app", app)
    time.sleep(3)  # the background task's 2 s, then the loop
    used = hosted_cpu_per_minute(host, app)
    host.stop()
    return used


with tempfile.TemporaryDirectory() as work:
    idle = [idle_host(work) for _ in range(runs)]
    print(f"host CPU per minute, 10 idle apps: {median_range(idle, 'ms')}", flush=True)
    for freezer in ("cgroup2", "cgroup1", "signal"):
        kernel, whole = latencies(work, freezer)
        for kind in ("frozen", "thawed"):
            print(f"{freezer} {'freeze' if kind == 'frozen' else 'thaw'}: kernel median {statistics.median(kernel[kind]):.3f} ms, "
                  f"max {max(kernel[kind]):.3f} ms; request to event median {statistics.median(whole[kind]):.2f} ms, "
                  f"max {max(whole[kind]):.2f} ms ({len(kernel[kind])} cycles)", flush=True)
    hybrid, watch = [], []
    for _ in range(runs):
        hybrid.append(hosted(work, "hybrid", [keepalive, "run", "--host", "--replay", log, "--loop", "--interval", "10s",
                                              "--audio-device", "null", "--json"], background=True))
        watch.append(hosted(work, "watch", [keepalive, "watch", "--replay", log, "--loop", "--speed", "1", "--json"],
                            background=False))
    print(f"hosted hybrid app in the background: {median_range(hybrid, 'ms')} per minute; "
          f"keepalive watch (replay, 1 Hz): {median_range(watch, 'ms')} per minute; "
          f"ratio {statistics.median(hybrid) / statistics.median(watch):.2f}x (goal 0.2x)")
