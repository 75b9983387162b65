#!/usr/bin/env python3
"""The host as the location service against staying awake (issue 20): CPU and wake-ups per
minute, all on one real gpsd fed live NMEA at 1 Hz on a pseudo-terminal with the device at rest,
gpsd opening the device only for watchers.

1. `keepalive host --gpsd` with ten tracker apps, each monitoring a region and significant
   changes, all in the background and frozen: the host's process (and its watchdog) plus the
   apps' cgroups. Measured after WARMUP seconds, once the host has paused its watch.
2. Ten `keepalive run --background` hybrids (always: a one-shot every 10 s), standalone.
3. One `keepalive watch`.

    python3 Benchmarks/service_bench.py KEEPALIVE SECONDS [WARMUP] > Benchmarks/SERVICE.md
"""
import datetime, json, os, platform, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "clients"))
from feeder import Feed  # noqa: E402

keepalive, seconds = sys.argv[1], float(sys.argv[2])
warmup = float(sys.argv[3]) if len(sys.argv) > 3 else 200

APP = """
import json, os, socket
s = socket.socket(socket.AF_UNIX); s.connect(os.environ["KEEPALIVE_HOST_SOCKET"])
f = s.makefile("rw")
def send(o): f.write(json.dumps(o) + "\\n"); f.flush()
send({"id": 1, "op": "hello", "app": os.environ["KEEPALIVE_APP"]})
send({"id": 2, "op": "monitor", "assuming": "unsatisfied", "conditions": {
    "work": {"type": "circle", "latitude": 48.2, "longitude": 11.6, "radius": 300},
    "moves": {"type": "significant-change"}}})
for line in f:
    m = json.loads(line)
    if m.get("notice") == "lifecycle":
        send({"id": 3, "op": "ack", "notice": m["event"]})
    elif m.get("notice") == "will-suspend":
        send({"id": 4, "op": "ack", "notice": "will-suspend"})
"""


# Where cgroup v2 is mounted: /sys/fs/cgroup, or /sys/fs/cgroup/unified beside v1 (a hybrid system).
CGROUP2 = next(line.split()[1] for line in open("/proc/mounts") if line.split()[2] == "cgroup2")


def new_cgroup(name):
    """A cgroup (v2) of the bench's own, for a process and everything it starts: the kernel counts
    their CPU, threads that ended included."""
    path = f"{CGROUP2}/{name}-{os.getpid()}"
    os.mkdir(path)
    return path


def joining(cgroup):
    return lambda: open(os.path.join(cgroup, "cgroup.procs"), "w").write(str(os.getpid()))


def cpu_seconds(cgroup):
    """CPU of every process in `cgroup` and below, ever (cpu.stat's usage_usec)."""
    with open(os.path.join(cgroup, "cpu.stat")) as f:
        return next(int(line.split()[1]) for line in f if line.startswith("usage_usec")) / 1e6


def switches(cgroup):
    """Context switches (wake-ups) by thread of every process in `cgroup` and below, now."""
    counts = {}
    for root, _, files in os.walk(cgroup):
        if "cgroup.threads" not in files:
            continue
        with open(os.path.join(root, "cgroup.threads")) as f:
            for tid in f.read().split():
                try:
                    with open(f"/proc/{tid}/status") as status:
                        counts[tid] = sum(int(line.split()[1]) for line in status
                                          if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")))
                except OSError:
                    pass
    return counts


def measure(cgroups):
    """(CPU ms, wake-ups) per minute over `seconds` of everything in `cgroups`; wake-ups of the
    threads alive at both ends."""
    cpu0, sw0 = sum(map(cpu_seconds, cgroups)), {k: v for c in cgroups for k, v in switches(c).items()}
    time.sleep(seconds)
    cpu1, sw1 = sum(map(cpu_seconds, cgroups)), {k: v for c in cgroups for k, v in switches(c).items()}
    woken = sum(sw1[tid] - sw0[tid] for tid in sw1 if tid in sw0)
    return (cpu1 - cpu0) * 1000 * 60 / seconds, woken * 60 / seconds


def monitoring_host(work, feed):
    socket_path = os.path.join(work, "host.sock")
    name = f"keepalive.service-{os.getpid()}"
    env = dict(os.environ, XDG_CONFIG_HOME=work)
    cgroup = new_cgroup("bench-host")
    host = subprocess.Popen(
        [keepalive, "host", "--socket", socket_path, "--freezer", "cgroup2", "--name", name, "--policy", "ios13",
         "--budget", "2s", "--app-user", "root", "--allow-root-apps", "--gpsd", f"localhost:{feed.port}",
         "--monitors", os.path.join(work, "monitors"), "--json"],
        stdout=subprocess.DEVNULL, env=env, preexec_fn=joining(cgroup))
    try:
        while not os.path.exists(socket_path):
            time.sleep(0.01)
        for i in range(10):
            app = f"tracker{i}"
            subprocess.run([keepalive, "auth", "set", "always", "--app", app], check=True, stdout=subprocess.DEVNULL, env=env)
            subprocess.run([keepalive, "host", "launch", "--socket", socket_path, "--app", app, "--", "/usr/bin/python3",
                            "-c", APP], check=True, stdout=subprocess.DEVNULL, env=env)
        time.sleep(1)
        for i in range(10):
            subprocess.run([keepalive, "host", "background", "--socket", socket_path, "--app", f"tracker{i}"], check=True,
                           stdout=subprocess.DEVNULL, env=env)
        time.sleep(warmup)
        status = subprocess.run([keepalive, "host", "status", "--socket", socket_path, "--json"], check=True,
                                capture_output=True, text=True, env=env).stdout
        frozen = sum(1 for line in status.splitlines() if json.loads(line)["frozen"])
        # The host makes its apps' groups inside its own group when it may, else at the root.
        apps = next(p for p in (os.path.join(cgroup, name), f"{CGROUP2}/{name}") if os.path.isdir(p))
        apps0 = cpu_seconds(apps)
        total = measure([cgroup] if apps.startswith(cgroup + "/") else [cgroup, apps])
        own = total[0] - (cpu_seconds(apps) - apps0) * 1000 * 60 / seconds
        return total, own, frozen
    finally:
        host.terminate()
        host.wait(30)
        try:
            os.rmdir(cgroup)
        except OSError:
            pass


def standalone(work, feed, count, command):
    cgroup = new_cgroup("bench-clients")
    processes = []
    for i in range(count):
        auth = os.path.join(work, f"auth{i}.json")
        subprocess.run([keepalive, "auth", "set", "always", "--app", f"bench{i}", "--auth-file", auth], check=True,
                       stdout=subprocess.DEVNULL)
        processes.append(subprocess.Popen(command(i, auth), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                          preexec_fn=joining(cgroup)))
    try:
        time.sleep(40)  # the hybrid's background task (30 s), then its polls
        return measure([cgroup])
    finally:
        for process in processes:
            process.terminate()
            process.wait(30)
        try:
            os.rmdir(cgroup)
        except OSError:
            pass


with tempfile.TemporaryDirectory() as work:
    feed = Feed(1, step=0.0, waits_for_clients=True)
    try:
        port = f"localhost:{feed.port}"
        (host_cpu, host_wakeups), own_cpu, frozen = monitoring_host(work, feed)
        print(f"host + 10 monitoring apps: {host_cpu:.2f} ms/min, {host_wakeups:.0f} wake-ups/min "
              f"(host alone {own_cpu:.2f} ms); {frozen} frozen", file=sys.stderr, flush=True)
        hybrid_cpu, hybrid_wakeups = standalone(work, feed, 10, lambda i, auth: [
            keepalive, "run", "--gpsd", port, "--background", "--policy", "ios13", "--strategy", "hybrid",
            "--interval", "10s", "--audio-device", "null", "--app", f"bench{i}", "--auth-file", auth])
        print(f"10 hybrids: {hybrid_cpu:.2f} ms/min, {hybrid_wakeups:.0f} wake-ups/min", file=sys.stderr, flush=True)
        watch_cpu, watch_wakeups = standalone(work, feed, 1, lambda i, auth: [keepalive, "watch", "--gpsd", port])
        print(f"1 watch: {watch_cpu:.2f} ms/min, {watch_wakeups:.0f} wake-ups/min", file=sys.stderr, flush=True)
    finally:
        feed.close()

print("## The location service's cost (issue 20)\n")
print(f"Generated by `scripts/bench-service {seconds:.0f}` on {datetime.date.today()} ({platform.machine()}): CPU (the "
      f"kernel's count for each side's cgroup) and wake-ups (context switches of the threads alive throughout) per minute over {seconds:.0f} s, on one real gpsd 3.22 fed live NMEA at 1 Hz on a "
      "pseudo-terminal, the device at rest, gpsd opening it only for watchers. Binary: "
      f"`{keepalive}`.\n")
print("| what | CPU ms per minute | wake-ups per minute | vs 10 hybrids | vs 1 watch |")
print("|---|---|---|---|---|")
rows = [
    (f"`keepalive host` with 10 tracker apps monitoring a region and significant changes, all frozen ({frozen} of 10 "
     "at the end), measured from "
     f"{warmup:.0f} s on: host, watchdog and apps", host_cpu, host_wakeups),
    ("of which the host alone (and its watchdog)", own_cpu, None),
    ("10 `keepalive run --background` hybrids (always, a one-shot every 10 s)", hybrid_cpu, hybrid_wakeups),
    ("1 `keepalive watch`", watch_cpu, watch_wakeups),
]
for label, cpu, wakeups in rows:
    shown = "" if wakeups is None else f"{wakeups:.0f}"
    print(f"| {label} | {cpu:.2f} | {shown} | {cpu / hybrid_cpu:.3f}x | {cpu / watch_cpu:.2f}x |")
ratio_h, ratio_w = host_cpu / hybrid_cpu, host_cpu / watch_cpu
wakes = host_wakeups / watch_wakeups
print(f"\nTargets: at most 0.15x the hybrids ({ratio_h:.3f}x: {'met' if ratio_h <= 0.15 else 'not met'}), at most "
      f"1.2x one watch ({ratio_w:.2f}x: {'met' if ratio_w <= 1.2 else 'not met'}), and wake-ups at most one watch's "
      f"(issue 55; {wakes:.2f}x: {'met' if wakes <= 1 else 'not met'}). At rest the host has left its watch "
      "(the stationary pause: a fix every 5 minutes), and with every app frozen it sleeps until the kernel, a socket "
      "or a fix wakes it.")
