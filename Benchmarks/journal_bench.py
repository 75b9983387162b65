#!/usr/bin/env python3
"""The journal and delivery figures, each the median of RUNS runs (min-max), against its anchor
in the same go. Needs mosquitto, mosquitto_pub/sub, sqlite3 and (from PyPI, in a venv) paho-mqtt.

1. Journal appends per second: one durable transaction a fix (synchronous FULL, as the service
   journals; and NORMAL), and batches of 100, against SQLite's own `sqlite3` shell doing the
   same inserts into the same schema.
2. Delivery over MQTT (QoS 1, to a local mosquitto): keepalive's deliverer against
   `mosquitto_pub -l -q 1` and Python's paho-mqtt publishing the same messages; CPU per
   1,000 fixes journaled and delivered. Against a broker with `set_tcp_nodelay true`, and
   once against mosquitto's defaults (Nagle: see the README).
3. Delivery over HTTP (libcurl, one request a fix, keep-alive) to a local Python receiver.
4. The service's RSS: `keepalive run` on a 1 Hz replay with the journal and one MQTT
   destination, against the same run without them.
5. The fleet: TRACKERS trackers (own journal, own MQTT connection each) on one mosquitto,
   fixes per second end to end, the delay from a fix being journaled to mosquitto_sub
   receiving it (median, p99), and what was lost.

    python3 Benchmarks/journal_bench.py BIN_DIR RUNS [TRACKERS] [SECONDS] [RATE]
"""
import json, os, socket, statistics, subprocess, sys, tempfile, threading, time, venv

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mqtt_bench_support as support

bin_dir, runs = sys.argv[1], int(sys.argv[2])
trackers = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
fleet_seconds = int(sys.argv[4]) if len(sys.argv) > 4 else 30
fleet_rate = float(sys.argv[5]) if len(sys.argv) > 5 else 1.0
bench, keepalive = f"{bin_dir}/keepalive-bench", f"{bin_dir}/keepalive"
work = tempfile.mkdtemp(prefix="journal-bench-")
N = 20000


free_port, timed, summary = support.free_port, support.timed, support.summary


def broker(nodelay=True):
    return support.broker(work, nodelay)


def bench_line(*arguments):
    return support.bench_line(bench, *arguments)



# The anchors' inputs: the same inserts as SQL, the same OwnTracks messages as lines.
schema = ("CREATE TABLE fix (seq INTEGER PRIMARY KEY AUTOINCREMENT, uid TEXT NOT NULL, fixTime REAL, recordedAt REAL NOT NULL, "
          "latitude REAL NOT NULL, longitude REAL NOT NULL, altitudeHAE REAL, altitudeMSL REAL, horizontalAccuracy REAL, "
          "verticalAccuracy REAL, speed REAL, course REAL, mode INTEGER NOT NULL, quality INTEGER, satellites INTEGER, device TEXT, "
          "battery INTEGER);\nCREATE INDEX fixTime ON fix(fixTime);\n")
inserts = [f"INSERT INTO fix (uid, fixTime, recordedAt, latitude, longitude, altitudeHAE, altitudeMSL, horizontalAccuracy, "
           f"verticalAccuracy, speed, course, mode, quality, satellites, device, battery) VALUES ('{i:08x}-d126-43b0-8d0e-5642331daebf', "
           f"{1700000000 + i}, 1795000000.123, {44.068 + (i % 1000) * 1e-6}, -121.314, NULL, 1145.2, 4.1, 6.2, 1.2, 90.5, 3, NULL, 11, NULL, NULL);"
           for i in range(N)]
for name, synchronous, batched in [("each", "FULL", False), ("batch", "FULL", True)]:
    with open(f"{work}/{name}.sql", "w") as f:
        f.write(f"PRAGMA journal_mode=WAL;\nPRAGMA synchronous={synchronous};\n{schema}")
        if batched:
            for k in range(0, N, 100):
                f.write("BEGIN;\n" + "\n".join(inserts[k:k + 100]) + "\nCOMMIT;\n")
        else:
            f.write("\n".join(inserts) + "\n")
messages = [json.dumps({"_type": "location", "_id": f"{i:08x}", "lat": 44.0680000 + (i % 1000) * 1e-6, "lon": -121.3140000,
                        "tst": 1700000000 + i, "acc": 4, "alt": 1145, "vac": 6, "vel": 4, "cog": 91, "created_at": 1795000000},
                       separators=(",", ":")) for i in range(N)]
with open(f"{work}/messages.txt", "w") as f:
    f.write("\n".join(messages) + "\n")
print("setting up paho-mqtt in a venv (PyPI)", file=sys.stderr)
venv.create(f"{work}/venv", with_pip=True)
subprocess.run([f"{work}/venv/bin/pip", "install", "-q", "paho-mqtt==2.1.0"], check=True)
with open(f"{work}/paho_pub.py", "w") as f:
    f.write('''
import sys, threading, paho.mqtt.client as mqtt
port, path = int(sys.argv[1]), sys.argv[2]
lines = open(path).read().split("\\n")[:-1]
done = threading.Event(); acked = [0]
def on_publish(client, userdata, mid, reason, properties):
    acked[0] += 1
    if acked[0] == len(lines): done.set()
client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="paho-bench")
client.max_inflight_messages_set(100)
client.max_queued_messages_set(0)
client.on_publish = on_publish
client.connect("127.0.0.1", port)
client.loop_start()
for line in lines: client.publish("owntracks/bench/paho", line, qos=1)
done.wait(); client.disconnect(); client.loop_stop()
''')
with open(f"{work}/receiver.py", "w") as f:
    f.write('''
import sys, http.server
class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200); self.send_header("Content-Length", "0"); self.end_headers()
    def log_message(self, *args): pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
''')

results = {k: [] for k in ["append-full", "append-batch", "sqlite3-each", "sqlite3-batch", "deliver", "deliver-nagle",
                           "mosquitto_pub", "paho", "cpu-journal", "cpu-deliver", "http", "cpu-http", "rss-plain", "rss-journal",
                           "rss-http"]}
auth = f"{work}/auth.json"
subprocess.run([keepalive, "auth", "set", "always", "--app", "bench", "--auth-file", auth], check=True, capture_output=True)
log = os.path.abspath("Mocks/Fixtures/nmea/ublox-8.log")


def rss_of_run(extra, seconds=12):
    process = subprocess.Popen([keepalive, "run", "--app", "bench", "--auth-file", auth, "--replay", log, "--speed", "1",
                                "--audio-device", "null", "--json", *extra], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(seconds)
    with open(f"/proc/{process.pid}/status") as f:
        rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024
    process.terminate()
    process.wait()
    return rss


for run in range(runs):
    print(f"run {run + 1} of {runs}", file=sys.stderr)
    for mode in ["full", "batch"]:
        path = f"{work}/append-{mode}-{run}.sqlite"
        results[f"append-{mode}"].append(bench_line("journal-append", path, str(N), mode)[f"append-{mode}"][3])
    for name in ["each", "batch"]:
        path = f"{work}/sqlite3-{name}-{run}.db"
        with open(f"{work}/{name}.sql") as sql:
            seconds, _ = timed(["sqlite3", path], stdin=sql)
        results[f"sqlite3-{name}"].append(N / seconds)
    process, port = broker(nodelay=True)
    lines = bench_line("deliver", f"{work}/deliver-{run}.sqlite", f"mqtt://127.0.0.1:{port}/owntracks/bench/keepalive", str(N))
    results["deliver"].append(lines["deliver-mqtt"][3])
    results["cpu-journal"].append(lines["journal"][2] / N * 1000 * 1000)
    results["cpu-deliver"].append(lines["deliver-mqtt"][2] / N * 1000 * 1000)
    with open(f"{work}/messages.txt") as stdin:
        seconds, _ = timed(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(port), "-t", "owntracks/bench/pub", "-q", "1", "-l"], stdin=stdin)
    results["mosquitto_pub"].append(N / seconds)
    seconds, _ = timed([f"{work}/venv/bin/python", f"{work}/paho_pub.py", str(port), f"{work}/messages.txt"])
    results["paho"].append(N / seconds)
    results["rss-journal"].append(rss_of_run(["--journal", f"{work}/rss-{run}.sqlite", "--deliver",
                                              f"home=mqtt://127.0.0.1:{port}/owntracks/bench/rss"]))
    results["rss-plain"].append(rss_of_run([]))
    process.terminate(); process.wait()
    process, port = broker(nodelay=False)
    lines = bench_line("deliver", f"{work}/nagle-{run}.sqlite", f"mqtt://127.0.0.1:{port}/owntracks/bench/keepalive", "5000")
    results["deliver-nagle"].append(lines["deliver-mqtt"][3])
    process.terminate(); process.wait()
    http_port = free_port()
    receiver = subprocess.Popen([sys.executable, f"{work}/receiver.py", str(http_port)])
    time.sleep(0.5)
    lines = bench_line("deliver", f"{work}/http-{run}.sqlite", f"owntracks+http://127.0.0.1:{http_port}/pub?user=b&device=h", "5000")
    results["http"].append(lines["deliver-owntracks+http"][3])
    results["cpu-http"].append(lines["deliver-owntracks+http"][2] / 5000 * 1000 * 1000)
    results["rss-http"].append(rss_of_run(["--journal", f"{work}/rss-http-{run}.sqlite", "--deliver",
                                           f"rec=owntracks+http://127.0.0.1:{http_port}/pub?user=b&device=h"]))
    receiver.terminate(); receiver.wait()

if runs:
    median = {k: statistics.median(v) for k, v in results.items() if v}
    print(f"\n## Journal and delivery ({runs} runs, medians with min-max; {N:,} fixes a run)\n")
    print("| figure | keepalive | anchor | ratio |\n|---|---|---|---|")
    print(f"| appends/s, one durable transaction a fix (FULL) | {summary(results['append-full'])} | sqlite3 shell, same inserts: {summary(results['sqlite3-each'])} | {median['append-full'] / median['sqlite3-each']:.2f}x |")
    print(f"| appends/s, batches of 100 (FULL) | {summary(results['append-batch'])} | sqlite3 shell, same batches: {summary(results['sqlite3-batch'])} | {median['append-batch'] / median['sqlite3-batch']:.2f}x |")
    print(f"| MQTT QoS 1 deliveries/s (batches of 100, broker `set_tcp_nodelay true`) | {summary(results['deliver'])} | mosquitto_pub -l: {summary(results['mosquitto_pub'])}; paho-mqtt: {summary(results['paho'])} | {median['deliver'] / median['mosquitto_pub']:.2f}x mosquitto_pub, {median['deliver'] / median['paho']:.2f}x paho |")
    print(f"| MQTT deliveries/s, mosquitto's defaults (Nagle) | {summary(results['deliver-nagle'])} | | |")
    print(f"| CPU ms per 1,000 fixes: journaled (FULL, one a time) + delivered over MQTT | {median['cpu-journal']:.1f} + {median['cpu-deliver']:.1f} = {median['cpu-journal'] + median['cpu-deliver']:.1f} | | |")
    print(f"| HTTP deliveries/s (libcurl, one POST a fix, keep-alive) | {summary(results['http'])} | | |")
    print(f"| CPU ms per 1,000 HTTP deliveries | {median['cpu-http']:.1f} | | |")
    print(f"| RSS MB, `keepalive run` at 1 Hz with journal + MQTT | {median['rss-journal']:.1f} | without journal: {median['rss-plain']:.1f} | +{median['rss-journal'] - median['rss-plain']:.1f} MB |")
    print(f"| RSS MB, `keepalive run` at 1 Hz with journal + HTTP | {median['rss-http']:.1f} | | +{median['rss-http'] - median['rss-plain']:.1f} MB |")

# The fleet, once.
if trackers > 0 and os.environ.get("FLEET_ONLY") != "skip":
    print(f"\nfleet: {trackers} trackers x {fleet_rate} fix/s x {fleet_seconds} s", file=sys.stderr)
    process, port = broker(nodelay=True)
    folder = tempfile.mkdtemp(prefix="fleet-", dir="/dev/shm")
    received = f"{work}/fleet-received.txt"
    subscriber = subprocess.Popen(["mosquitto_sub", "-h", "127.0.0.1", "-p", str(port), "-t", "owntracks/fleet/#", "-q", "1",
                                   "-F", "%U %p"], stdout=open(received, "w"))
    time.sleep(0.5)
    # 100 trackers a process: libmosquitto's loop uses select(), so one process's descriptors
    # (a socket, a wake-up pipe, a journal with its WAL and shared memory per tracker) must stay under 1,024.
    per_process = 100
    processes = []
    for first in range(0, trackers, per_process):
        count = min(per_process, trackers - first)
        os.makedirs(f"{folder}/{first}", exist_ok=True)
        processes.append((f"{folder}/{first}", subprocess.Popen(
            [bench, "fleet", str(port), str(count), str(fleet_seconds), str(fleet_rate), f"{folder}/{first}", str(first)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)))
    cpu, undelivered = 0.0, 0
    for _, fleet_process in processes:
        for line in fleet_process.communicate()[0].split("\n"):
            if line.startswith("fleet "):
                cpu += float(line.split()[3])
            if line.startswith("fleet-undelivered"):
                undelivered += int(line.split()[1])
    time.sleep(2)
    subscriber.terminate(); subscriber.wait()
    process.terminate(); process.wait()
    sent = {}  # tst (unique per fix: tracker * 100,000 + index) -> when it was journaled
    for sub_folder, _ in processes:
        for line in open(f"{sub_folder}/sent.txt"):
            if line.strip():
                _, tst, at = line.split()
                sent[int(tst)] = float(at)
    delays, seen, duplicates, last = [], set(), 0, 0.0
    for line in open(received):
        stamp, payload = line.split(" ", 1)
        tst, at = json.loads(payload)["tst"], float(stamp)
        last = max(last, at)
        if tst in seen:
            duplicates += 1
            continue
        seen.add(tst)
        if tst in sent:
            delays.append((at - sent[tst]) * 1000)
    first = min(sent.values())
    lost = len(set(sent) - seen)
    delays.sort()
    print(f"\n## Fleet: {trackers} trackers on one mosquitto ({fleet_rate} fix/s each for {fleet_seconds} s, "
          f"{len(processes)} processes of up to 100, journals on tmpfs)\n")
    print(f"- fixes journaled {len(sent):,}, received {len(seen):,}, duplicates {duplicates}, lost {lost}")
    print(f"- end to end {len(seen) / (last - first):,.0f} fixes/s; delay journaled to subscriber: median {statistics.median(delays):.1f} ms, "
          f"p99 {delays[int(len(delays) * 0.99)]:.1f} ms; trackers' CPU {cpu:.1f} s ({cpu / len(sent) * 1e6:.0f} µs a fix); "
          f"undelivered at the end {undelivered}")
