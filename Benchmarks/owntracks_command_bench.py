#!/usr/bin/env python3
"""OwnTracks' reportLocation: the time from a command published with mosquitto_pub to the
fix it asked for reaching a subscriber (mosquitto_sub's own arrival time, %U), with the service
awake (in the background, nothing else published) and frozen by a real `keepalive host`
(woken by the command's data on its socket). The anchor, in the same go: mosquitto_pub to
mosquitto_sub through the same broker, the floor of any answer. The receiver is a real gpsd fed
by gpsfake (a fix about every 0.8 s), so an answer waits for the receiver's next fix. Needs root
(the host's cgroups).

    python3 Benchmarks/owntracks_command_bench.py BIN_DIR ROUNDS
"""
import json, os, shutil, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mqtt_bench_support as support

bin_dir, rounds = os.path.abspath(sys.argv[1]), int(sys.argv[2])
keepalive = f"{bin_dir}/keepalive"
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
replay = f"{root}/Mocks/Fixtures/nmea/ublox-8.log"
work = tempfile.mkdtemp(prefix="owntracks-command-bench-")
os.chmod(work, 0o777)
shutil.copy(replay, f"{work}/ublox-8.log")
os.chmod(f"{work}/ublox-8.log", 0o644)
TOPIC = "owntracks/bench/phone"


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


class Subscriber:
    """mosquitto_sub on the device's topics, each line `ARRIVAL TOPIC PAYLOAD`."""

    def __init__(self, port, name):
        self.path = f"{work}/{name}.out"
        self.file = open(self.path, "w")
        self.process = subprocess.Popen(
            ["mosquitto_sub", "-h", "127.0.0.1", "-p", str(port), "-q", "1", "-t", f"{TOPIC}/#", "-t", TOPIC,
             "-F", "%U %t %p"], stdout=self.file, stderr=subprocess.DEVNULL)

    def lines(self):
        with open(self.path) as f:
            return [line.rstrip("\n").split(" ", 2) for line in f if line.count(" ") >= 2]

    def wait_for(self, predicate, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            found = [line for line in self.lines() if predicate(line)]
            if found:
                return found
            time.sleep(0.01)
        raise SystemExit(f"timed out waiting in {self.path}")

    def stop(self):
        self.process.terminate()
        self.process.wait()
        self.file.close()


def publish(port, topic, message):
    subprocess.run(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(port), "-q", "1", "-t", topic, "-m", message], check=True)


def locations(subscriber):
    return [line for line in subscriber.lines() if line[1] == TOPIC and '"_type":"location"' in line[2]]


def ask(port, subscriber, before):
    """One reportLocation: seconds from just before mosquitto_pub to the location's arrival."""
    sent = time.time()
    publish(port, f"{TOPIC}/cmd", '{"_type":"cmd","action":"reportLocation"}')
    arrived = subscriber.wait_for(lambda line: line[1] == TOPIC and '"_type":"location"' in line[2] and line not in before)
    return float(arrived[0][0]) - sent


def anchor(port, subscriber, count):
    results = []
    for index in range(count):
        sent = time.time()
        publish(port, f"{TOPIC}/probe", f"probe {index}")
        line = subscriber.wait_for(lambda line: line[1] == f"{TOPIC}/probe" and line[2] == f"probe {index}")[0]
        results.append(float(line[0]) - sent)
    return results


def gpsfake(run):
    """A real gpsd fed the log in a loop by gpsfake, on a port of its own (and a TMPDIR)."""
    port = support.free_port()
    folder = f"{work}/gpsfake-{run}"
    os.makedirs(folder)
    process = subprocess.Popen(["/usr/bin/gpsfake", "-q", "-P", str(port), "-c", "0.1", f"{work}/ublox-8.log"],
                               env=dict(os.environ, TMPDIR=folder), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    time.sleep(1.5)
    return process, port


def service_arguments(port, journal, hosted):
    auth = f"{work}/auth.json"
    subprocess.run([keepalive, "auth", "set", "always", "--app", "tracker", "--auth-file", auth], check=True,
                   stdout=subprocess.DEVNULL)
    os.chmod(auth, 0o666)
    return [keepalive, "run", "--app", "tracker", "--auth-file", auth, "--gpsd", f"127.0.0.1:{gpsd_port}", "--audio-device", "null",
            "--json", "--journal", journal, "--batch-latency", "200ms", "--deliver", f"home=mqtt://127.0.0.1:{port}/{TOPIC}"] + (
        ["--host", "--strategy", "monitoring", "--mode", "manual"] if hosted else ["--strategy", "none", "--background"])


def awake(port, subscriber, run):
    process = subprocess.Popen(service_arguments(port, f"{work}/awake-{run}.sqlite", False),
                               stdout=open(f"{work}/awake-{run}.out", "w"), stderr=subprocess.STDOUT)
    subscriber.wait_for(lambda line: line[1] == f"{TOPIC}/status")
    results = []
    for _ in range(rounds):
        results.append(ask(port, subscriber, locations(subscriber)))
        time.sleep(0.3)
    process.terminate()
    process.wait()
    return results


def host_status(socket):
    out = subprocess.run([keepalive, "host", "status", "--socket", socket, "--json"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        try:
            status = json.loads(line)
        except ValueError:
            continue
        for app in status.get("apps", [status]):
            if app.get("app") == "tracker":
                return app
    return {}


def wait_frozen(socket, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if host_status(socket).get("frozen"):
            return
        time.sleep(0.05)
    raise SystemExit("the app was never frozen")


def frozen(port, subscriber, run):
    socket = f"{work}/host-{run}.sock"
    # The host's own store of the app's authorization (always), and its monitors, in the work folder.
    environment = dict(os.environ, XDG_CONFIG_HOME=f"{work}/config")
    subprocess.run([keepalive, "auth", "set", "always", "--app", "tracker"], env=environment, check=True, stdout=subprocess.DEVNULL)
    host = subprocess.Popen([keepalive, "host", "serve", "--socket", socket, "--freezer", "cgroup2", "--event-budget", "1s",
                             # Fifteen commands in a row measure the wake, not the push budget (two at once, three an hour).
                             "--data-wakes", "100/1s",
                             "--name", f"keepalive.bench-{os.getpid()}-{run}", "--gpsd", "127.0.0.1:9",
                             "--monitors", f"{work}/monitors"],
                            env=environment, stdout=open(f"{work}/host-{run}.out", "w"), stderr=subprocess.STDOUT)
    while not os.path.exists(socket):
        time.sleep(0.05)
    subprocess.run([keepalive, "host", "launch", "--socket", socket, "--app", "tracker", "--modes", "location", "--user", "nobody",
                    "--output", f"{work}/frozen-{run}.out", "--"] + service_arguments(port, f"{work}/frozen-{run}.sqlite", True),
                   check=True, stdout=subprocess.DEVNULL)
    statuses = len([line for line in subscriber.lines() if line[1] == f"{TOPIC}/status"])
    subscriber.wait_for(lambda line: len([l for l in subscriber.lines() if l[1] == f"{TOPIC}/status"]) > statuses)
    subprocess.run([keepalive, "host", "background", "--socket", socket, "--app", "tracker"], check=True, stdout=subprocess.DEVNULL)
    results = []
    for _ in range(rounds):
        wait_frozen(socket)
        results.append(ask(port, subscriber, locations(subscriber)))
    host.terminate()
    host.wait()
    return results


results = {"anchor": [], "awake": [], "frozen": []}
for run in range(2):
    gps, gpsd_port = gpsfake(run)
    process, port = support.broker(work, nodelay=True)
    subscriber = Subscriber(port, f"sub-{run}")
    time.sleep(0.3)
    results["anchor"] += anchor(port, subscriber, rounds)
    results["awake"] += awake(port, subscriber, run)
    results["frozen"] += frozen(port, subscriber, run)
    subscriber.stop()
    process.terminate()
    process.wait()
    os.killpg(gps.pid, 15)
    try:
        gps.wait(timeout=5)
    except subprocess.TimeoutExpired:
        os.killpg(gps.pid, 9)

ms = lambda seconds: f"{seconds * 1000:.0f} ms"
print(f"\n## OwnTracks reportLocation, command to published fix ({len(results['awake'])} commands each; gpsd, a fix about every 0.8 s)\n")
print("| service | median | p99 | max | anchor: mosquitto_pub to mosquitto_sub, median | ratio of medians |\n|---|---|---|---|---|---|")
anchor_median = statistics.median(results["anchor"])
for name in ("awake", "frozen"):
    values = results[name]
    print(f"| {name} | {ms(statistics.median(values))} | {ms(percentile(values, 0.99))} | {ms(max(values))} "
          f"| {ms(anchor_median)} | {statistics.median(values) / anchor_median:.0f}x |")
shutil.rmtree(work, ignore_errors=True)
