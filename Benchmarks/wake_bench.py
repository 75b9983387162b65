#!/usr/bin/env python3
"""Wake latency per freezer: how long after the fix that decides a region event reaches the
host the frozen app reads the event (issue 20).

A real `keepalive host --gpsd` watches a real gpsd fed live NMEA on a pseudo-terminal (5 Hz),
the device crossing a 150 m region every 2 s (inside at its centre, outside 485 m south). One
app, authorized always, monitors the region and is in the background: frozen between events,
woken for each, frozen again after the event budget (500 ms here). The host puts into each
`location-event` notice when the fix reached it (`received`, CLOCK_MONOTONIC); the app writes
it with its own reading of that clock as it reads the notice.

    python3 Benchmarks/wake_bench.py KEEPALIVE EVENTS > Benchmarks/WAKE.md
"""
import datetime, json, os, platform, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "clients"))
from feeder import Feed  # noqa: E402

keepalive, events = sys.argv[1], int(sys.argv[2])
INSIDE, OUTSIDE = 4807.300, 4807.038  # NMEA latitudes; the region's centre is 48°07.300'N 11°31'E
REGION = {"crossing": {"type": "circle", "latitude": 48 + 7.3 / 60, "longitude": 11 + 31 / 60, "radius": 150}}

APP = """
import json, os, socket, time
s = socket.socket(socket.AF_UNIX); s.connect(os.environ["KEEPALIVE_HOST_SOCKET"])
f = s.makefile("rw")
out = open(os.environ["WAKE_LOG"], "a")
def send(o): f.write(json.dumps(o) + "\\n"); f.flush()
send({"id": 1, "op": "hello", "app": os.environ["KEEPALIVE_APP"]})
send({"id": 2, "op": "monitor", "conditions": json.loads(os.environ["WAKE_REGION"]), "assuming": "unsatisfied"})
for line in f:
    m = json.loads(line)
    if m.get("notice") == "location-event":
        now = time.monotonic()
        e = m["monitorEvent"]
        out.write("%s %s %.6f %.6f\\n" % (e["identifier"], e["state"], m["received"], now)); out.flush()
    elif m.get("notice") == "lifecycle":
        send({"id": 3, "op": "ack", "notice": m["event"]})
    elif m.get("notice") == "will-suspend":
        send({"id": 4, "op": "ack", "notice": "will-suspend"})
"""


def measure(work, freezer):
    feed = Feed(5, latitude=lambda index: INSIDE if (index // 10) % 2 else OUTSIDE)
    socket_path = os.path.join(work, f"host-{freezer}.sock")
    log = os.path.join(work, f"wake-{freezer}.log")
    env = dict(os.environ, XDG_CONFIG_HOME=work, WAKE_LOG=log, WAKE_REGION=json.dumps(REGION))
    subprocess.run([keepalive, "auth", "set", "always", "--app", "waker"], check=True, stdout=subprocess.DEVNULL, env=env)
    host = subprocess.Popen(
        [keepalive, "host", "--socket", socket_path, "--freezer", freezer, "--name", f"keepalive.wake-{os.getpid()}",
         "--app-user", "root", "--allow-root-apps", "--gpsd", f"localhost:{feed.port}", "--event-budget", "500ms",
         "--event-wakes", f"{events + 10}/6m",  # every event a wake: the budget of wakes is not what is measured
         "--monitors", os.path.join(work, f"monitors-{freezer}"), "--json"],
        stdout=subprocess.PIPE, text=True, env=env)
    try:
        while not os.path.exists(socket_path):
            time.sleep(0.01)
        ctl = lambda *args: subprocess.run([keepalive, "host", args[0], "--socket", socket_path, *args[1:]], check=True,
                                           stdout=subprocess.DEVNULL, env=env)
        # Apps get only the variables named (an allow-list since the bench was written).
        ctl("launch", "--app", "waker", "--env", f"WAKE_LOG={log}", "--env", f"WAKE_REGION={json.dumps(REGION)}",
            "--", "/usr/bin/python3", "-c", APP)
        time.sleep(1)
        ctl("background", "--app", "waker")
        deadline = time.time() + events * 2.5 + 30
        while time.time() < deadline:
            if os.path.exists(log) and sum(1 for _ in open(log)) >= events + 1:
                break
            time.sleep(0.2)
    finally:
        host.terminate()
        out, _ = host.communicate(timeout=30)
        feed.close()
    lines = [line.split() for line in open(log)] if os.path.exists(log) else []
    records = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    woken = sum(1 for r in records if r.get("event") == "location-event" and r.get("delivery") == "woken")
    # The first event comes as the app enters the background, before it was ever frozen.
    latencies = [(float(handled) - float(received)) * 1000 for _, _, received, handled in lines[1:events + 1]]
    if os.environ.get("WAKE_DEBUG"):
        print(" ".join("%.1f" % v for v in latencies), file=sys.stderr)
        worst = max(range(len(latencies)), key=lambda i: latencies[i])
        received = float(lines[worst + 1][2])
        print(f"worst: event {worst + 1}, received {received:.3f}", file=sys.stderr)
        with open(os.path.join(os.environ["WAKE_DEBUG"], f"host-{freezer}.json"), "w") as f:
            f.write(out)
    return latencies, woken


def p99(values):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.99 * (len(ordered) - 1))))]


with tempfile.TemporaryDirectory() as work:
    rows = []
    for freezer in ("cgroup2", "cgroup1", "signal"):
        latencies, woken = measure(work, freezer)
        if len(latencies) < events:
            sys.exit(f"{freezer}: only {len(latencies)} of {events} events reached the app")
        rows.append((freezer, latencies, woken))
        print(f"{freezer}: median {statistics.median(latencies):.2f} ms, p99 {p99(latencies):.2f} ms, "
              f"max {max(latencies):.2f} ms ({len(latencies)} events, {woken} delivered as woken)", file=sys.stderr, flush=True)

anchor = statistics.median(rows[0][1])
print("## Wake latency (issue 20)\n")
print(f"Generated by `scripts/bench-wake {events}` on {datetime.date.today()} ({platform.machine()}): from the fix that "
      "decides a region event reaching the host (`keepalive host --gpsd`, a real gpsd 3.22 fed live NMEA at 5 Hz on a "
      "pseudo-terminal, the device crossing a 150 m region every 2 s) to the frozen app reading the `location-event` "
      "notice, both on CLOCK_MONOTONIC. The app is woken for each event and frozen again 500 ms later (`--event-budget "
      f"500ms`). Binary: `{keepalive}`.\n")
print("| freezer | median | p99 | max | events | delivered as woken (the first included) | median vs cgroup2 |")
print("|---|---|---|---|---|---|---|")
for freezer, latencies, woken in rows:
    print(f"| {freezer} | {statistics.median(latencies):.2f} ms | {p99(latencies):.2f} ms | {max(latencies):.2f} ms | "
          f"{len(latencies)} | {woken} | {statistics.median(latencies) / anchor:.2f}x |")
met = all(max(latencies) < 100 for _, latencies, _ in rows)
print("\nThe target, an app woken within 100 ms of the crossing fix reaching the host, is this benchmark's: "
      + ("met by every wake of every freezer" if met else "**not met** by every wake (see max)") + ". "
      "`HostMonitoringTests` follows the same path once with a bound of the event's budget, not of the target: "
      "a timed test fails when other tests load the machine beside it (one wake there took 194 ms).")
