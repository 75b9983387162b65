#!/usr/bin/env python3
"""GeoClue2 served by `keepalive host --geoclue`, against a plain gpsd client in the same go.

1. Latency: gpsd reads a pseudo-terminal that Benchmarks/clients/feeder.py writes live 5 Hz
   epochs to (one write() each, its time recorded); latency is from that write to the fix's line
   reaching this script through a pipe: Debian's where-am-i (libgeoclue: LocationUpdated, then
   the Location object's properties read over the bus, then printed; under stdbuf -oL), and the
   minimal C libgps client (the anchor). The first 10 fixes are skipped.
2. The host's CPU per minute (utime + stime from /proc) with a 1 Hz feed: no GeoClue client (the
   anchor), 10 idle clients (made and given a DesktopId, not started: what an app holds between
   uses), and 10 started clients (exact, no thresholds: every fix to each).

The bus is private (dbus-daemon with the project's policy); the host reads the test's own
authorization store. Needs root (the host), dbus-daemon, geoclue-2-demo, python3-gi.

    python3 Benchmarks/geoclue_bench.py KEEPALIVE C_CLIENT RUNS SECONDS [cpu]    (cpu: the second part only)
"""
import os, selectors, shutil, signal, statistics, subprocess, sys, tempfile, time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "clients"))
import feeder  # noqa: E402

root = os.path.dirname(here)
keepalive, c_client, runs, seconds = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
only_cpu = sys.argv[5:] == ["cpu"]
where_am_i = "/usr/libexec/geoclue-2.0/demos/where-am-i"
probe = os.path.join(root, "scripts/geoclue-probe")


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


class Service:
    """A private system bus and the host serving GeoClue2 on it, reading gpsd at `port`."""

    def __init__(self, port):
        self.work = tempfile.mkdtemp(prefix="geoclue-bench-")
        self.address = "unix:path=%s/bus" % self.work
        with open(self.work + "/bus.conf", "w") as config:
            config.write("""<busconfig><type>system</type><listen>%s</listen><auth>EXTERNAL</auth>
<policy context="default"><allow user="*"/><deny own="*"/><deny send_type="method_call"/>
<allow send_type="signal"/><allow send_requested_reply="true" send_type="method_return"/>
<allow send_requested_reply="true" send_type="error"/><allow receive_type="method_call"/>
<allow receive_type="method_return"/><allow receive_type="error"/><allow receive_type="signal"/>
<allow send_destination="org.freedesktop.DBus"/></policy>
<include>%s/dbus/keepalive-geoclue.conf</include></busconfig>""" % (self.address, root))
        self.bus = subprocess.Popen(["dbus-daemon", "--nofork", "--nopidfile", "--config-file=%s/bus.conf" % self.work],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while not os.path.exists(self.work + "/bus"):
            time.sleep(0.01)
        self.env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=self.address, XDG_CONFIG_HOME=self.work + "/config", LC_ALL="C.UTF-8")
        for app in ["geoclue-where-am-i", "bench"]:
            subprocess.run([keepalive, "auth", "set", "always", "--app", app], env=self.env, check=True, stdout=subprocess.DEVNULL)
        self.host = subprocess.Popen(
            [keepalive, "host", "--geoclue", "--json", "--freezer", "signal", "--socket", self.work + "/host.sock",
             "--monitors", self.work + "/monitors", "--name", "geoclue-bench", "--gpsd", "127.0.0.1:%d" % port],
            env=self.env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        for line in self.host.stdout:
            if b'"event":"geoclue"' in line:
                break
        else:
            raise SystemExit("the host did not serve GeoClue2 (is the D-Bus policy readable? scripts/setup)")
        # Its output is drained, so that it never blocks on a full pipe.
        self.drain = subprocess.Popen(["cat"], stdin=self.host.stdout, stdout=subprocess.DEVNULL)

    def cpu(self):
        """Seconds the host's threads ran, to the nanosecond (schedstat; /proc's stat counts 10 ms ticks)."""
        total = 0
        for task in os.listdir("/proc/%d/task" % self.host.pid):
            try:
                total += int(open("/proc/%d/task/%s/schedstat" % (self.host.pid, task)).read().split()[0])
            except OSError:
                pass  # a thread that ended meanwhile
        return total / 1e9

    def close(self):
        for process in [self.host, self.bus]:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
        self.drain.wait(5)
        shutil.rmtree(self.work, ignore_errors=True)


def latency_run():
    written = {}

    def latitude(index):  # the feed's own walk north, each epoch's write time noted by its index
        written[index] = time.time()
        return 4807.038 + index * 0.001

    feed = feeder.Feed(rate=5, latitude=latitude)
    service = Service(feed.port)
    try:
        clients = {
            "c": subprocess.Popen([c_client, "localhost", str(feed.port), "times"], stdout=subprocess.PIPE),
            "geoclue": subprocess.Popen(["stdbuf", "-oL", where_am_i, "--timeout", str(int(seconds) + 5)], stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, env=service.env),
        }
        selector = selectors.DefaultSelector()
        buffers, seen = {}, {name: [] for name in clients}
        for name, process in clients.items():
            os.set_blocking(process.stdout.fileno(), False)
            selector.register(process.stdout, selectors.EVENT_READ, name)
            buffers[name] = b""
        deadline = time.time() + seconds
        while time.time() < deadline:
            for key, _ in selector.select(timeout=0.2):
                arrived = time.time()
                buffers[key.data] += os.read(key.fileobj.fileno(), 65536)
                *lines, buffers[key.data] = buffers[key.data].split(b"\n")
                for line in lines:
                    text = line.decode(errors="replace").strip()
                    if key.data == "c" and text:
                        seen["c"].append((feed.writes.get(feeder.fix_key(text)), arrived))
                    elif text.startswith("Latitude:"):
                        lat = float(text.split()[1].rstrip("°"))
                        index = round(((lat - 48) * 60 - 7.038) / 0.001)
                        seen["geoclue"].append((written.get(index), arrived))
        for process in clients.values():
            process.send_signal(signal.SIGTERM)
            process.wait(5)
    finally:
        service.close()
        feed.close()
    return {name: [(arrived - sent) * 1000 for sent, arrived in fixes[10:] if sent] for name, fixes in seen.items()}


def cpu_run(kind):
    feed = feeder.Feed(rate=1)
    service = Service(feed.port)
    holders = []
    try:
        if kind == "idle":
            for _ in range(10):
                holder = subprocess.Popen([probe, "raw"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=service.env, text=True)
                holder.stdout.readline()
                holder.stdin.write('{"op": "call", "path": "/org/freedesktop/GeoClue2/Manager", '
                                   '"interface": "org.freedesktop.GeoClue2.Manager", "method": "CreateClient"}\n')
                holder.stdin.flush()
                path = holder.stdout.readline().split('"')[3]
                holder.stdin.write('{"op": "set", "path": "%s", "interface": "org.freedesktop.GeoClue2.Client", '
                                   '"property": "DesktopId", "signature": "s", "value": "bench"}\n' % path)
                holder.stdin.flush()
                holder.stdout.readline()
                holders.append(holder)
        elif kind == "started":
            for _ in range(10):
                holders.append(subprocess.Popen([probe, "follow", "bench", "8", "0", "0", str(seconds + 30)],
                                                stdout=subprocess.DEVNULL, env=service.env))
        time.sleep(5)  # settled: every client made (and started)
        before = service.cpu()
        time.sleep(seconds)
        return (service.cpu() - before) * 1000 * 60 / seconds
    finally:
        for holder in holders:
            holder.kill()
            holder.wait()
        service.close()
        feed.close()


latencies = {"c": [], "geoclue": []}
medians = {"c": [], "geoclue": []}
for _ in range(0 if only_cpu else runs):
    for name, values in latency_run().items():
        if not values:
            raise SystemExit("latency: %s printed no matching fix" % name)
        latencies[name] += values
        medians[name].append(statistics.median(values))
if not only_cpu:
    print("| client, feed write to the fix's line | median (min-max of run medians) | p99 of all | fixes | vs C |")
    print("|---|---|---|---|---|")
    anchor = statistics.median(medians["c"])
    for name, label in [("c", "anchor: minimal C libgps client"), ("geoclue", "where-am-i through the host's GeoClue2")]:
        median = statistics.median(medians[name])
        print("| %s | %.2f ms (%.2f-%.2f) | %.2f ms | %d | %.2fx |" % (
            label, median, min(medians[name]), max(medians[name]), percentile(latencies[name], 0.99), len(latencies[name]), median / anchor))
    print()
print("| the host at a 1 Hz feed | CPU ms per minute, median (min-max) | vs anchor |")
print("|---|---|---|")
figures = {kind: [cpu_run(kind) for _ in range(runs)] for kind in ["none", "idle", "started"]}
base = statistics.median(figures["none"])
for kind, label in [("none", "anchor: no GeoClue client"), ("idle", "10 idle clients (made, not started)"),
                    ("started", "10 started clients (exact, every fix)")]:
    values = figures[kind]
    ratio = "%.2fx" % (statistics.median(values) / base) if base > 0 else "(anchor 0)"
    print("| %s | %.2f (%.2f-%.2f) | %s |" % (label, statistics.median(values), min(values), max(values), ratio))
