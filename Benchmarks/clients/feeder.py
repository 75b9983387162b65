#!/usr/bin/env python3
"""A real gpsd fed through a pseudo-terminal with live NMEA, for the latency, idle and
one-shot benchmarks (scripts/bench). Epochs carry the current UTC time, as a receiver's do, and
each epoch is written in one write() whose time is recorded, so a client's latency is the time
from that write to the client printing the fix.

  feeder.py latency KEEPALIVE C_CLIENT SECONDS     -> "latency-c MS" and "latency-ka MS" (medians)
  feeder.py cost KEEPALIVE C_CLIENT PY_CLIENT LOG SECONDS -> "cost-<client> CPU_MS_PER_1000_TPV RSS_KB"
  feeder.py idle KEEPALIVE AUTH_FILE SECONDS        -> "idle-<client> CPU_MS_PER_MIN RSS_KB" lines
  feeder.py polls KEEPALIVE AUTH_FILE SECONDS       -> "polls-run" and "polls-watch": run's polling phase
  feeder.py oneshot KEEPALIVE_BENCH RUNS            -> the bench's own "oneshot-..." lines
  feeder.py wakeups KEEPALIVE AUTH_FILE SECONDS     -> "wakeups-<client> PER_MIN" and one line a thread
  feeder.py power KEEPALIVE AUTH_FILE SECONDS       -> "power-<mode> OPEN_PERCENT CPU_MS_PER_MIN" lines
"""
import datetime, os, random, selectors, signal, socket, subprocess, sys, tempfile, threading, time, tty


def checksum(body):
    value = 0
    for byte in body.encode():
        value ^= byte
    return "%02X" % value


def sentence(body):
    return "$%s*%s\r\n" % (body, checksum(body))


def epoch(now, index, step=0.001, lat=None):
    """RMC, GGA, GSA for one fix at `now`, moving `step` minutes of latitude (1.85 m) each time,
    or at latitude `lat` (NMEA ddmm.mmm) when given."""
    hms = now.strftime("%H%M%S") + ".%02d" % (now.microsecond // 10000)
    lat = 4807.038 + index * step if lat is None else lat
    rmc = sentence("GPRMC,%s,A,%.3f,N,01131.000,E,0.5,54.7,%s,,,A" % (hms, lat, now.strftime("%d%m%y")))
    gga = sentence("GPGGA,%s,%.3f,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,," % (hms, lat))
    gsa = sentence("GPGSA,A,3,04,05,,09,12,,,24,,,,,2.5,1.3,2.1")
    return (rmc + gga + gsa).encode()


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Feed:
    """gpsd on a free port reading a pty we write epochs to, at `rate` per second."""

    def __init__(self, rate, step=0.001, waits_for_clients=False, latitude=None):
        self.rate = rate
        self.step = step
        self.latitude = latitude  # index -> NMEA latitude, instead of the steady walk north
        self.waits_for_clients = waits_for_clients
        self.writes = {}  # fix time "HH:MM:SS.ss" -> write time (time.time())
        self.port = free_port()
        self.master, slave = os.openpty()
        tty.setraw(slave)
        self.slave = slave
        self.path = os.ttyname(slave)
        os.chmod(self.path, 0o666)
        if waits_for_clients:
            # While gpsd has the device closed nobody reads it: epochs are dropped, as on a serial
            # line, instead of the feed blocking once the pty's buffer is full.
            os.set_blocking(self.master, False)
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()
        self.start_gpsd()

    def start_gpsd(self):
        """Starts gpsd on the feed's port and pty; returns once it accepts connections."""
        # -n opens the device at once and keeps it open; without it gpsd opens it for its first
        # watcher and closes it 60 s after the last one leaves (RELEASE_TIMEOUT).
        options = ["-N", "-b"] if self.waits_for_clients else ["-N", "-n", "-b"]
        self.gpsd = subprocess.Popen(["gpsd", *options, "-S", str(self.port), self.path],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise SystemExit("gpsd did not start on port %d (is gpsd installed? scripts/setup)" % self.port)

    def kill_gpsd(self):
        """Kills gpsd at once (SIGKILL: no goodbye to its clients)."""
        self.gpsd.kill()
        self.gpsd.wait()

    def run(self):
        index = 0
        period = 1.0 / self.rate
        next_at = time.time()
        while not self.stopped.is_set():
            now = datetime.datetime.now(datetime.timezone.utc)
            data = epoch(now, index, self.step, self.latitude(index) if self.latitude else None)
            written = time.time()
            try:
                os.write(self.master, data)
            except OSError:
                pass  # nobody reads the pty while gpsd restarts
            self.writes[now.strftime("%H:%M:%S.") + "%02d" % (now.microsecond // 10000)] = written
            index += 1
            next_at += period
            time.sleep(max(0, next_at - time.time()))

    def close(self):
        self.stopped.set()
        self.thread.join()
        self.gpsd.terminate()
        try:
            self.gpsd.wait(5)
        except subprocess.TimeoutExpired:
            self.gpsd.kill()
        os.close(self.master)
        os.close(self.slave)


def fix_key(iso):
    """'2026-11-22T06:20:31.120Z' or seconds since 1970 -> 'HH:MM:SS.ss'."""
    if "T" in iso:
        clock = iso.split("T")[1].rstrip("Z")
        hms, _, fraction = clock.partition(".")
        return hms + "." + (fraction + "00")[:2]
    moment = datetime.datetime.fromtimestamp(float(iso), datetime.timezone.utc)
    return moment.strftime("%H:%M:%S.") + "%02d" % round(moment.microsecond / 10000)


def measured(command, **options):
    return subprocess.Popen(command, stdout=options.get("stdout", subprocess.DEVNULL), stderr=subprocess.DEVNULL)


def peak_rss(process):
    """Peak RSS in KB of the program the process runs now (VmHWM starts again at exec, unlike
    wait4's ru_maxrss, which would count the Python process forked to start it)."""
    for line in open("/proc/%d/status" % process.pid):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def usage(process, signo=signal.SIGINT):
    """Stops the process: its CPU seconds (wait4, microsecond resolution) and peak RSS in KB."""
    rss = peak_rss(process)
    process.send_signal(signo)
    _, _, rusage = os.wait4(process.pid, 0)
    process.returncode = 0
    return rusage.ru_utime + rusage.ru_stime, rss


def cost(keepalive, c_client, python_client, log, seconds):
    """Three clients on one gpsfake stream at once, as fast as gpsfake goes: CPU per 1,000 TPV
    (counted by the C client) and peak RSS of each, start-up included."""
    port = free_port()
    scratch = tempfile.mkdtemp()
    gpsfake = subprocess.Popen(["gpsfake", "-q", "-P", str(port), "-c", "0.0005", log],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env=dict(os.environ, TMPDIR=scratch), start_new_session=True)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        counter = subprocess.Popen([c_client, "localhost", str(port)], stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL)
        others = {
            "py": measured(["/usr/bin/python3", python_client, str(port)]),
            "ka": measured([keepalive, "watch", "--gpsd", "localhost:%d" % port, "--json"]),
        }
        time.sleep(seconds)
        rss = peak_rss(counter)
        counter.send_signal(signal.SIGTERM)
        _, _, rusage = os.wait4(counter.pid, 0)
        tpv = int(counter.stdout.read().split()[0])
        results = {"c": (rusage.ru_utime + rusage.ru_stime, rss)}
        results.update({name: usage(process, signal.SIGTERM) for name, process in others.items()})
        for name, (cpu, rss) in results.items():
            print("cost-%s %.3f %d" % (name, cpu * 1e6 / tpv, rss))
    finally:
        os.killpg(gpsfake.pid, signal.SIGTERM)
        gpsfake.wait(10)


def latency(keepalive, c_client, seconds):
    feed = Feed(rate=5)
    try:
        clients = {
            "c": subprocess.Popen([c_client, "localhost", str(feed.port), "times"], stdout=subprocess.PIPE),
            "ka": subprocess.Popen([keepalive, "watch", "--gpsd", "localhost:%d" % feed.port, "--json"],
                                   stdout=subprocess.PIPE),
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
                chunk = os.read(key.fileobj.fileno(), 65536)
                buffers[key.data] += chunk
                *lines, buffers[key.data] = buffers[key.data].split(b"\n")
                for line in lines:
                    text = line.decode(errors="replace")
                    if key.data == "c":
                        stamp = text.strip()
                    elif '"class":"fix"' in text:
                        stamp = text.split('"time":"')[1].split('"')[0]
                    else:
                        continue
                    seen[key.data].append((fix_key(stamp), arrived))
        for process in clients.values():
            process.send_signal(signal.SIGINT)
            process.wait(5)
    finally:
        feed.close()
    for name, fixes in seen.items():
        delays = sorted((arrived - feed.writes[key]) * 1000 for key, arrived in fixes[10:] if key in feed.writes)
        if not delays:
            raise SystemExit("latency: client %s printed no matching fix" % name)
        print("latency-%s %.3f %d" % (name, delays[len(delays) // 2], len(delays)))


def steady_cost(label, keepalive, auth_file, seconds, clients, settle):
    """CPU per minute of each client on one 1 Hz feed, from SETTLE seconds on: each started twice,
    one stopped after SETTLE, one after SETTLE + SECONDS. The difference of their CPU (wait4, to
    the microsecond) is that stretch alone, without start-up and first fix."""
    feed = Feed(rate=1)
    try:
        port = str(feed.port)
        known = {
            "watch": [keepalive, "watch", "--gpsd", "localhost:" + port],
            "run": [keepalive, "run", "--gpsd", "localhost:" + port, "--background", "--policy", "ios13",
                    "--strategy", "hybrid", "--interval", "10s", "--audio-device", "null",
                    "--app", "bench", "--auth-file", auth_file],
            "gpxlogger": ["gpxlogger", "localhost:" + port],
        }
        commands = {name: known[name] for name in clients}
        long = {name: measured(command) for name, command in commands.items()}
        short = {name: measured(command) for name, command in commands.items()}
        time.sleep(settle)
        baseline = {name: usage(process)[0] for name, process in short.items()}
        time.sleep(seconds)
        for name, process in long.items():
            cpu, rss = usage(process)
            print("%s-%s %.3f %d" % (label, name, (cpu - baseline[name]) * 1000 * 60 / seconds, rss))
    finally:
        feed.close()


def idle(keepalive, auth_file, seconds):
    steady_cost("idle", keepalive, auth_file, seconds, ["watch", "run", "gpxlogger"], settle=5)


def polls(keepalive, auth_file, seconds):
    """`keepalive run` in its polling phase alone (from 40 s, after the 30 s background task),
    `watch` beside it."""
    steady_cost("polls", keepalive, auth_file, seconds, ["run", "watch"], settle=40)


def switches(process):
    """Context switches (voluntary and not) of each live thread: {tid: (name, count)}."""
    threads = {}
    for tid in os.listdir("/proc/%d/task" % process.pid):
        try:
            fields = dict(line.split(":", 1) for line in open("/proc/%d/task/%s/status" % (process.pid, tid)))
        except OSError:
            continue  # the thread ended
        count = int(fields["voluntary_ctxt_switches"]) + int(fields["nonvoluntary_ctxt_switches"])
        threads[tid] = (fields["Name"].strip(), count)
    return threads


def wakeups(keepalive, auth_file, seconds):
    """Thread wake-ups per minute of `run` in its polling phase (from 40 s) and of `watch`, on one
    1 Hz feed: context switches of every thread, counted from /proc over SECONDS. A thread that
    ended meanwhile is not counted (its wake-ups are lost with it; the bench names threads born
    in the window, which is how such threads show)."""
    feed = Feed(rate=1)
    try:
        port = str(feed.port)
        clients = {
            "run": [keepalive, "run", "--gpsd", "localhost:" + port, "--background", "--policy", "ios13",
                    "--strategy", "hybrid", "--interval", "10s", "--audio-device", "null",
                    "--app", "bench", "--auth-file", auth_file],
            "watch": [keepalive, "watch", "--gpsd", "localhost:" + port],
            "gpxlogger": ["gpxlogger", "localhost:" + port],
        }
        processes = {name: measured(command) for name, command in clients.items()}
        time.sleep(40)
        before = {name: switches(process) for name, process in processes.items()}
        time.sleep(seconds)
        after = {name: switches(process) for name, process in processes.items()}
        for name, process in processes.items():
            rows = []
            for tid, (thread, count) in after[name].items():
                start = before[name].get(tid, (thread, 0))[1]
                born = "" if tid in before[name] else " (born in the window)"
                rows.append((count - start, thread + born))
            total = sum(count for count, _ in rows) * 60 / seconds
            print("wakeups-%s %.1f" % (name, total))
            for count, thread in sorted(rows, reverse=True):
                if count:
                    print("  %-40s %.1f/min" % (thread, count * 60 / seconds))
            process.send_signal(signal.SIGINT)
            process.wait()
    finally:
        feed.close()


def holds_device(gpsd, path):
    """Whether gpsd has the receiver's device open now (its file descriptors, from /proc)."""
    folder = "/proc/%d/fd" % gpsd.pid
    for fd in os.listdir(folder):
        try:
            if os.readlink(os.path.join(folder, fd)) == path:
                return True
        except OSError:
            pass  # closed meanwhile
    return False


def cpu_seconds(process):
    """utime + stime of a running process, from /proc (clock ticks)."""
    fields = open("/proc/%d/stat" % process.pid).read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def power(keepalive, auth_file, seconds):
    """How long gpsd keeps the receiver's device open, and the client's CPU, per mode: each mode
    its own gpsd (opening the device only for watchers) and live 1 Hz feed, all at once for
    SECONDS; the device is looked at every 0.5 s. Modes: `watch`; `run` in the background
    (hybrid, always: a one-shot every 10 s); `monitor` on a device moving 1.85 m/s; `monitor`
    on a device at rest (its stationary pause)."""
    folder = tempfile.mkdtemp()
    conditions = os.path.join(folder, "conditions.json")
    with open(conditions, "w") as out:
        out.write('{"home": {"type": "circle", "latitude": 48.1173, "longitude": 11.5167, "radius": 200},'
                  ' "moves": {"type": "significant-change"}, "visits": {"type": "visit"}}')
    modes = {
        "watch": (0, lambda port: [keepalive, "watch", "--gpsd", "localhost:" + port]),
        "hybrid": (0, lambda port: [keepalive, "run", "--gpsd", "localhost:" + port, "--background", "--policy",
                                    "ios13", "--strategy", "hybrid", "--interval", "10s", "--audio-device", "null",
                                    "--app", "bench", "--auth-file", auth_file]),
        "monitor-moving": (0.001, lambda port: [keepalive, "monitor", "--gpsd", "localhost:" + port,
                                                "--conditions", conditions]),
        "monitor-stationary": (0, lambda port: [keepalive, "monitor", "--gpsd", "localhost:" + port,
                                                "--conditions", conditions]),
    }
    feeds, clients = {}, {}
    try:
        for name, (step, command) in modes.items():
            feeds[name] = Feed(rate=1, step=step, waits_for_clients=True)
            clients[name] = measured(command(str(feeds[name].port)))
        started = time.time()
        cpu_before = {name: cpu_seconds(process) for name, process in clients.items()}
        samples = {name: [] for name in modes}
        while time.time() - started < seconds:
            for name, feed in feeds.items():
                samples[name].append(holds_device(feed.gpsd, feed.path))
            time.sleep(0.5)
        elapsed = time.time() - started
        for name, process in clients.items():
            cpu = (cpu_seconds(process) - cpu_before[name]) * 1000 * 60 / elapsed
            print("power-%s %.1f %.2f" % (name, 100.0 * sum(samples[name]) / len(samples[name]), cpu))
    finally:
        for process in clients.values():
            process.send_signal(signal.SIGINT)
            process.wait()
        for feed in feeds.values():
            feed.close()


def oneshot(bench, runs):
    feed = Feed(rate=1)
    try:
        time.sleep(3)  # gpsd has a fix
        subprocess.run([bench, "oneshot", "localhost:%d" % feed.port, str(runs)], check=True)
    finally:
        feed.close()


if __name__ == "__main__":
    command, *arguments = sys.argv[1:]
    if command == "latency":
        latency(arguments[0], arguments[1], float(arguments[2]))
    elif command == "cost":
        cost(arguments[0], arguments[1], arguments[2], arguments[3], float(arguments[4]))
    elif command == "idle":
        idle(arguments[0], arguments[1], float(arguments[2]))
    elif command == "polls":
        polls(arguments[0], arguments[1], float(arguments[2]))
    elif command == "wakeups":
        wakeups(arguments[0], arguments[1], float(arguments[2]))
    elif command == "power":
        power(arguments[0], arguments[1], float(arguments[2]))
    elif command == "oneshot":
        oneshot(arguments[0], int(arguments[1]))
    else:
        raise SystemExit(__doc__)
