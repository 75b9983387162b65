#!/usr/bin/env python3
"""OwnTracks' encrypted payloads: messages per second sealed (libsodium's secretbox) and
published at QoS 1 to a local mosquitto by keepalive's deliverer, against the same deliverer in
plain JSON and against `mosquitto_pub -l -q 1` publishing as many messages of the encrypted size,
all in the same go. Each figure the median of RUNS runs (min-max).

    python3 Benchmarks/owntracks_bench.py BIN_DIR RUNS
"""
import base64, os, statistics, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mqtt_bench_support as support

bin_dir, runs = sys.argv[1], int(sys.argv[2])
bench = f"{bin_dir}/keepalive-bench"
work = tempfile.mkdtemp(prefix="owntracks-bench-")
N = 10000
key = f"{work}/owntracks.key"
with open(key, "w") as f:
    f.write("a key shared with the readers\n")
os.chmod(key, 0o600)
# The anchor's messages: as long as an encrypted location (nonce, MAC and base64 included).
with open(f"{work}/messages.txt", "w") as f:
    for index in range(N):
        f.write('{"_type":"encrypted","data":"' + base64.b64encode(os.urandom(262)).decode() + '"}\n')

results = {"plain": [], "encrypted": [], "mosquitto_pub": [], "cpu-plain": [], "cpu-encrypted": []}
for run in range(runs):
    print(f"run {run + 1} of {runs}", file=sys.stderr)
    process, port = support.broker(work, nodelay=True)
    url = f"mqtt://127.0.0.1:{port}/owntracks/bench/plain"
    lines = support.bench_line(bench, "deliver", f"{work}/plain-{run}.sqlite", url, str(N))
    results["plain"].append(lines["deliver-mqtt"][3])
    results["cpu-plain"].append(lines["deliver-mqtt"][2] / N * 1000 * 1000)
    url = f"mqtt://127.0.0.1:{port}/owntracks/bench/sealed?key-file={key}"
    lines = support.bench_line(bench, "deliver", f"{work}/sealed-{run}.sqlite", url, str(N))
    results["encrypted"].append(lines["deliver-mqtt"][3])
    results["cpu-encrypted"].append(lines["deliver-mqtt"][2] / N * 1000 * 1000)
    with open(f"{work}/messages.txt") as stdin:
        seconds, _ = support.timed(
            ["mosquitto_pub", "-h", "127.0.0.1", "-p", str(port), "-t", "owntracks/bench/pub", "-q", "1", "-l"], stdin=stdin
        )
    results["mosquitto_pub"].append(N / seconds)
    process.terminate()
    process.wait()

median = {name: statistics.median(values) for name, values in results.items()}
print(f"\n## OwnTracks encrypted payloads ({runs} runs, medians with min-max; {N:,} messages a run, QoS 1)\n")
print("| figure | keepalive | anchor | ratio |\n|---|---|---|---|")
print(f"| encrypted messages/s, sealed and published (batches of 100) | {support.summary(results['encrypted'])} "
      f"| mosquitto_pub -l, messages of the same size: {support.summary(results['mosquitto_pub'])} "
      f"| {median['encrypted'] / median['mosquitto_pub']:.2f}x mosquitto_pub |")
print(f"| plain JSON messages/s, the same deliverer | {support.summary(results['plain'])} | | "
      f"encrypted {median['encrypted'] / median['plain']:.2f}x plain |")
print(f"| CPU ms per 1,000 messages delivered, plain + sealing | {median['cpu-plain']:.1f} + "
      f"{median['cpu-encrypted'] - median['cpu-plain']:.1f} = {median['cpu-encrypted']:.1f} | | |")
