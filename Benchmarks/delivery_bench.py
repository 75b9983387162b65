"""How live the tracker is, per durability mode, and what it writes: the delay from a fix's
arrival at `keepalive run` (its JSON line, read as it is written) to its receipt by an independent
`mosquitto_sub` (its own receive time, %U), at 1 Hz on a local mosquitto with its defaults; and the
bytes the service sent to the disk per fix (/proc/PID/io write_bytes, the journal on this
machine's disk). The anchor, in the same run and through the same broker: a line handed to
`mosquitto_pub -l` at 1 Hz, to the same subscriber (the broker's and the subscriber's own floor).

    delivery_bench.py KEEPALIVE RUNS SECONDS    prints a Markdown section (scripts/bench-delivery)
"""
import os, platform, queue, shutil, statistics, subprocess, sys, tempfile, threading, time, json, datetime

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mqtt_bench_support import broker

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPLAY = os.path.join(ROOT, "Mocks/Fixtures/nmea/ublox-8.log")
WARM_UP = 10  # seconds before the bytes are counted: the journal made, the connection up


def stamped_lines(stream, out):
    """Puts (time read, line) for each line of `stream` into `out`."""
    for line in iter(stream.readline, ""):
        out.put((time.time(), line))


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def write_bytes(pid):
    try:
        with open(f"/proc/{pid}/io") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("write_bytes:"))
    except (OSError, StopIteration):
        return None


def one_run(keepalive, mode, seconds, work):
    """Delays (s) of the service's fixes and of the anchor's lines, and bytes per fix."""
    process, port = broker(work, nodelay=False)
    subscriber = subprocess.Popen(
        ["mosquitto_sub", "-h", "127.0.0.1", "-p", str(port), "-t", "bench/#", "-t", "owntracks/#", "-q", "1", "-F", "%U %t %p"],
        stdout=subprocess.PIPE, text=True, bufsize=1)
    received = queue.Queue()
    threading.Thread(target=stamped_lines, args=(subscriber.stdout, received), daemon=True).start()
    time.sleep(0.5)
    anchor = subprocess.Popen(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(port), "-t", "bench/anchor", "-q", "1", "-l"],
                              stdin=subprocess.PIPE, text=True, bufsize=1)
    folder = tempfile.mkdtemp(dir="/var/tmp", prefix="bench-delivery-")
    subprocess.run([keepalive, "auth", "set", "always", "--app", "bench", "--auth-file", f"{folder}/auth.json"],
                   check=True, stdout=subprocess.DEVNULL)
    service = subprocess.Popen(
        [keepalive, "run", "--app", "bench", "--auth-file", f"{folder}/auth.json", "--replay", REPLAY, "--speed", "1", "--loop",
         "--json", "--audio-device", "null", "--journal", f"{folder}/j.sqlite", "--durability", mode,
         "--deliver", f"home=mqtt://127.0.0.1:{port}/owntracks/bench/car"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)
    told = queue.Queue()
    threading.Thread(target=stamped_lines, args=(service.stdout, told), daemon=True).start()
    arrivals, sent = {}, {}
    started = time.monotonic()
    counted_from, bytes_before, fixes_at_start, fixes = None, None, 0, 0
    next_anchor = started + 0.5
    while time.monotonic() - started < seconds + WARM_UP:
        if time.monotonic() >= next_anchor:
            key = f"a{len(sent)}"
            sent[key] = time.time()
            anchor.stdin.write(key + "\n")
            next_anchor += 1
        try:
            at, line = told.get(timeout=0.05)
        except queue.Empty:
            continue
        if '"class":"fix"' not in line:
            continue
        fix = json.loads(line)
        fixes += 1
        moment = datetime.datetime.fromisoformat(fix["time"].replace("Z", "+00:00")).timestamp()
        arrivals[int(moment)] = at
        if counted_from is None and time.monotonic() - started >= WARM_UP:
            counted_from, bytes_before, fixes_at_start = time.monotonic(), write_bytes(service.pid), fixes
    bytes_after = write_bytes(service.pid)
    counted = fixes - fixes_at_start
    time.sleep(3)  # the last messages reach the subscriber
    for proc in (service, anchor, subscriber, process):
        proc.terminate()
    for proc in (service, anchor, subscriber, process):
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
    delays, anchor_delays = [], []
    while not received.empty():
        _, line = received.get()
        parts = line.rstrip("\n").split(" ", 2)
        if len(parts) < 3:
            continue
        at, topic, payload = float(parts[0]), parts[1], parts[2]
        if topic == "bench/anchor":
            if payload in sent:
                anchor_delays.append(at - sent[payload])
            continue
        try:
            message = json.loads(payload)
        except ValueError:
            continue
        if message.get("_type") == "location" and message.get("tst") in arrivals:
            delays.append(at - arrivals.pop(message["tst"]))
    shutil.rmtree(folder, ignore_errors=True)
    per_fix = (bytes_after - bytes_before) / counted if bytes_before is not None and bytes_after is not None and counted else None
    return delays, anchor_delays, per_fix, len(arrivals)


def main():
    keepalive, runs, seconds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    work = tempfile.mkdtemp(prefix="delivery-bench-")
    rows = {}
    try:
        for mode in ("grouped", "full"):
            medians, p99s, anchors, anchor_p99s, bytes_per_fix, missing = [], [], [], [], [], 0
            for run in range(runs):
                print(f"{mode} run {run + 1} of {runs}", file=sys.stderr, flush=True)
                delays, anchor_delays, per_fix, unmatched = one_run(keepalive, mode, seconds, work)
                medians.append(statistics.median(delays) * 1000)
                p99s.append(percentile(delays, 0.99) * 1000)
                anchors.append(statistics.median(anchor_delays) * 1000)
                anchor_p99s.append(percentile(anchor_delays, 0.99) * 1000)
                if per_fix is not None:
                    bytes_per_fix.append(per_fix / 1024)
                missing += unmatched
            rows[mode] = (medians, p99s, anchors, anchor_p99s, bytes_per_fix, missing)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    def fig(values, digits=1):
        return f"{statistics.median(values):.{digits}f} ({min(values):.{digits}f}-{max(values):.{digits}f})"

    print("## Delivery: from a fix's arrival to the server (issue 52)\n")
    print(f"Generated by `scripts/bench-delivery {runs} {seconds}` on {datetime.date.today()} ({platform.machine()}): "
          f"`keepalive run --replay ublox-8.log --speed 1 --loop --journal --deliver mqtt://...` at 1 Hz, {seconds} s a run after "
          f"{WARM_UP} s of start-up, {runs} runs a mode (medians of the runs, min-max). The delay runs from the service's JSON line "
          "for a fix (read as written) to `mosquitto_sub`'s receive time for it, on one local mosquitto with its defaults; bytes "
          "are the service's own `write_bytes` per fix, the journal on this machine's ext4 disk (the block device's count in a VM "
          "with a real power cut: `scripts/power-cuts --bytes`, RELIABILITY.md). The anchor is the same broker and subscriber fed "
          "by `mosquitto_pub -l`, a line a second, in the same run.\n")
    print("| `--durability` | arrival to subscriber, median | p99 | anchor median | anchor p99 | written per fix | fixes never received |")
    print("|---|---|---|---|---|---|---|")
    for mode, (medians, p99s, anchors, anchor_p99s, bytes_per_fix, missing) in rows.items():
        written = f"{fig(bytes_per_fix, 2)} KB" if bytes_per_fix else "n/a"
        print(f"| `{mode}`{' (default)' if mode == 'grouped' else ''} | {fig(medians)} ms | {fig(p99s)} ms | {fig(anchors)} ms | "
              f"{fig(anchor_p99s)} ms | {written} | {missing} |")
    grouped = rows["grouped"]
    met = statistics.median(grouped[0]) <= 500 and statistics.median(grouped[1]) <= 2000
    small = bool(grouped[4]) and statistics.median(grouped[4]) <= 1.0
    print(f"\nTargets (the default, `grouped`): median at most 0.5 s and p99 at most 2 s ({'met' if met else 'NOT met'}); "
          f"at most 1 KB written per fix at 1 Hz ({'met' if small else 'NOT met'}). Before issue 52 `grouped` delivered nothing "
          "until its group committed, up to a minute after a fix came.")


main()
