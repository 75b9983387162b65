#!/usr/bin/env python3
"""The host under hostile apps (issue 40), each figure the median of RUNS runs (min-max), with
its anchor in the same go. Run as root: `keepalive host` on cgroup v2, apps as nobody.

1. Control-plane latency: `status` and an app's report (`audio`, 33 a second, under the
   rate limit) sent on a connection of their own, request to reply on this script's
   monotonic clock, 200 each: the anchor with no
   other client, then beside 1,000 hostile connections of another user (every other one a
   request begun and fed a byte a second), then beside a frozen app that opened 300.
2. Wake budget: three apps each name a datagram socket and beat every 100 ms while they run; a
   sender writes a byte to each every 200 ms for SECONDS. Awake fraction = beats seen / beats a
   running app makes in that time. Anchor: the same apps, the same data, under a host with no
   budget to speak of (--data-wakes 1000000/1ms). Beside them, a well-behaved app sent one
   byte halfway: woken for it, and how long from the byte to the app reading it.

    python3 Benchmarks/hostile_bench.py KEEPALIVE RUNS SECONDS
"""
import json, os, socket, statistics, subprocess, sys, tempfile, threading, time

keepalive, runs, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


class Host:
    def __init__(self, work, extra=()):
        self.socket = os.path.join(work, f"host-{time.monotonic_ns()}.sock")
        name = f"keepalive.bench-{os.getpid()}-{time.monotonic_ns()}"
        self.process = subprocess.Popen(
            [keepalive, "host", "--socket", self.socket, "--freezer", "cgroup2", "--name", name, "--json",
             "--app-user", "nobody", "--monitors", os.path.join(work, f"monitors-{name}"), *extra],
            stdout=subprocess.PIPE, text=True)
        while not os.path.exists(self.socket + ".apps"):
            time.sleep(0.01)

    def ctl(self, command, *args):
        subprocess.run([keepalive, "host", command, "--socket", self.socket, *args], check=True, stdout=subprocess.DEVNULL)

    def stop(self):
        self.process.terminate()
        self.process.communicate(timeout=60)


def round_trips(path, request, count=200):
    """Request-to-reply times, ms, of `count` requests on one connection (a fresh one each 20)."""
    times = []
    for start in range(0, count, 20):
        s = socket.socket(socket.AF_UNIX)
        s.connect(path)
        f = s.makefile("rw")
        for i in range(20):
            t = time.monotonic()
            f.write(json.dumps(dict(request, id=start + i)) + "\n")
            f.flush()
            f.readline()
            times.append((time.monotonic() - t) * 1000)
        s.close()
    return times


FLOOD = os.path.abspath("Benchmarks/clients/flood_client.py")
HOARDER = os.path.abspath("Benchmarks/clients/hoarder_app.py")

REPORTER = """
import json, os, socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(os.environ["KEEPALIVE_HOST_SOCKET"]); f = s.makefile("rw")
f.write(json.dumps({"id": 0, "op": "hello", "app": os.environ["KEEPALIVE_APP"]}) + "\\n"); f.flush(); f.readline()
times = []
for i in range(200):
    t = time.monotonic()
    f.write(json.dumps({"id": i + 1, "op": "audio", "active": False}) + "\\n"); f.flush(); f.readline()
    times.append((time.monotonic() - t) * 1000)
    time.sleep(0.03)  # 33 a second: under the host's rate limit (50), which would be measured instead
open(sys.argv[1], "w").write(json.dumps(times))
time.sleep(600)
"""

PUSHED = os.path.abspath("Benchmarks/clients/pushed_app.py")


def control_plane(work):
    results = {}
    host = Host(work)
    apps = host.socket + ".apps"
    os.chmod(work, 0o1777)  # the apps run as nobody and write here
    report = os.path.join(work, f"report-{time.monotonic_ns()}.json")
    def reporter(name):
        path = os.path.join(work, f"{name}-{time.monotonic_ns()}.json")
        host.ctl("launch", "--app", name, "--", "/usr/bin/python3", "-c", REPORTER, path)
        while not os.path.exists(path):
            time.sleep(0.05)
        return json.load(open(path))
    results["anchor status"] = round_trips(host.socket, {"op": "status"})
    results["anchor report"] = reporter("reporter0")
    flood = subprocess.Popen(NOBODY + ["/usr/bin/python3", FLOOD, apps, "1000"], stdout=subprocess.PIPE, text=True)
    flood.stdout.readline()
    results["1,000 hostile connections: status"] = round_trips(host.socket, {"op": "status"})
    results["1,000 hostile connections: report"] = reporter("reporter1")
    flood.kill(); flood.wait()
    host.ctl("launch", "--app", "hog", "--", "/usr/bin/python3", HOARDER, "300")
    time.sleep(2)
    host.ctl("background", "--app", "hog")
    time.sleep(2)
    results["a frozen app holding 300: status"] = round_trips(host.socket, {"op": "status"})
    results["a frozen app holding 300: report"] = reporter("reporter2")
    host.stop()
    return results


def storm(work, budget):
    host = Host(work, ["--event-budget", "10s", *(["--data-wakes", budget] if budget else [])])
    os.chmod(work, 0o1777)  # the apps run as nobody and write here
    apps = []
    for name in ["storm0", "storm1", "storm2", "quiet"]:
        path, beats = os.path.join(work, f"{name}-{time.monotonic_ns()}.sock"), os.path.join(work, f"{name}-{time.monotonic_ns()}.beats")
        host.ctl("launch", "--app", name, "--", "/usr/bin/python3", PUSHED, path, beats)
        while not os.path.exists(path):
            time.sleep(0.05)
        os.chmod(path, 0o666)
        apps.append((name, path, beats))
    time.sleep(1)
    for name, _, _ in apps:
        host.ctl("background", "--app", name)
    time.sleep(seconds and 3)
    sender = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sender.setblocking(False)  # a frozen app's queue fills: its data waits, the sender does not
    def send(data, path):
        try: sender.sendto(data, path)
        except BlockingIOError: pass
    start = time.clock_gettime(time.CLOCK_MONOTONIC)
    quiet_sent = None
    while time.clock_gettime(time.CLOCK_MONOTONIC) - start < seconds:
        for name, path, _ in apps[:3]:
            send(b"x", path)
        now = time.clock_gettime(time.CLOCK_MONOTONIC)
        if quiet_sent is None and now - start >= seconds / 2:
            send(b"q", apps[3][1])
            quiet_sent = now
        time.sleep(0.2)
    end = time.clock_gettime(time.CLOCK_MONOTONIC)
    fractions = []
    for name, _, beats in apps[:3]:
        stamps = [float(line.split()[0]) for line in open(beats) if line.strip()]
        seen = [t for t in stamps if start <= t <= end]
        fractions.append(len(seen) / ((end - start) / 0.1) * 100)
    quiet = [line.split() for line in open(apps[3][2]) if line.strip()]
    read = [float(t) for t, got in quiet if int(got) > 0]
    answered = (read[0] - quiet_sent) * 1000 if read and quiet_sent else None
    host.stop()
    return fractions, answered


def median_range(values, unit):
    return f"{statistics.median(values):.2f} {unit} ({min(values):.2f}-{max(values):.2f})"


with tempfile.TemporaryDirectory() as work:
    collected = {}
    for _ in range(runs):
        for key, values in control_plane(work).items():
            collected.setdefault(key, []).append(values)
    anchors = {kind: statistics.median([statistics.median(v) for v in collected[f"anchor {kind}"]]) for kind in ("status", "report")}
    print("| control plane, request to reply | median ms (min-max of run medians) | slowest of all ms | vs anchor |")
    print("|---|---|---|---|")
    for key, values in collected.items():
        medians = [statistics.median(v) for v in values]
        kind = "status" if key.endswith("status") else "report"
        print(f"| {key} | {median_range(medians, 'ms')} | {max(max(v) for v in values):.2f} | "
              f"{statistics.median(medians) / anchors[kind]:.2f}x |", flush=True)
    budgeted, anchor = storm(work, None), storm(work, "1000000/1ms")
    print(f"\n| push storm, 1 byte each 200 ms for {seconds:.0f} s | awake % of the time (3 apps: median, min-max) | the well-behaved app's one push: woken, read after |")
    print("|---|---|---|")
    for label, (fractions, answered) in [("default budget (2 at once, 3 an hour)", budgeted), ("anchor: no budget (1000000/1ms)", anchor)]:
        print(f"| {label} | {median_range(fractions, '%')} | "
              f"{'yes, %.0f ms' % answered if answered is not None else 'not woken'} |", flush=True)
