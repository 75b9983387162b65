#!/usr/bin/env python3
"""The footprint on a small board (issue 55): the package's installed size, the binary's size,
and the resident memory of each way keepalive runs beside gpsd and gpxlogger, in one go.

Every process is measured on one real gpsd fed a live 1 Hz NMEA feed on a pseudo-terminal:
VmRSS after SETTLE seconds, and how much of it is the process's own binary, anonymous memory
and shared libraries (/proc/PID/smaps). Before each start the measured executable's pages are
dropped from the page cache (posix_fadvise DONTNEED), so that it is read from the disk as after
a boot: how many of its pages become resident depends on how the kernel reads a file in (its
readahead and the size of the page cache's folios), and a binary just written by the build is
cached differently.

    python3 Benchmarks/footprint_bench.py KEEPALIVE DEB RUNS [SETTLE] > Benchmarks/FOOTPRINT.md
"""
import datetime, os, platform, re, shutil, socket, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "clients"))
from feeder import Feed  # noqa: E402

keepalive, deb, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
settle = float(sys.argv[4]) if len(sys.argv) > 4 else 15.0
work = tempfile.mkdtemp(prefix="footprint-")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def uncache(path):
    """Drops `path`'s pages from the page cache (those no process maps)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def memory(pid, executable):
    """(RSS, own binary, anonymous, libraries) in MB, from smaps."""
    own = anon = libraries = 0
    name = None
    for line in open(f"/proc/{pid}/smaps"):
        if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
            fields = line.split()
            name = fields[5] if len(fields) > 5 else ""
        elif line.startswith("Rss:"):
            kb = int(line.split()[1])
            if name == executable:
                own += kb
            elif name.startswith("/"):
                libraries += kb
            else:
                anon += kb
    return tuple(v / 1024 for v in (own + anon + libraries, own, anon, libraries))


def measure(command, executable=None):
    executable = os.path.realpath(executable or command[0])
    uncache(executable)
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(settle)
        if process.poll() is not None:
            sys.exit(f"footprint: {' '.join(command)} ended (status {process.returncode}) before it was measured")
        return memory(process.pid, executable)
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


feed = Feed(1, step=0.0)
gpsd = f"localhost:{feed.port}"
broker_port = free_port()
broker_conf = os.path.join(work, "mosquitto.conf")
open(broker_conf, "w").write(f"listener {broker_port} 127.0.0.1\nallow_anonymous true\npersistence false\n")
broker = subprocess.Popen(["mosquitto", "-c", broker_conf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
auth = os.path.join(work, "auth.json")
subprocess.run([keepalive, "auth", "set", "always", "--app", "bench", "--auth-file", auth], check=True, stdout=subprocess.DEVNULL)
service = [keepalive, "run", "--app", "bench", "--auth-file", auth, "--gpsd", gpsd, "--audio-device", "null", "--json"]

ways = {
    "watch": lambda run: measure([keepalive, "watch", "--gpsd", gpsd, "--json"]),
    "run": lambda run: measure(service),
    "run --journal --deliver mqtt://": lambda run: measure(service + [
        "--journal", os.path.join(work, f"journal-{run}.sqlite"),
        "--deliver", f"home=mqtt://127.0.0.1:{broker_port}/owntracks/bench/phone"]),
    "host (no apps)": lambda run: measure([keepalive, "host", "--socket", os.path.join(work, f"host-{run}.sock"),
                                           "--name", f"keepalive-footprint-{os.getpid()}-{run}.service",
                                           "--freezer", "signal", "--gpsd", gpsd, "--device-sleep", "off"]),
    "gpxlogger": lambda run: measure(["gpxlogger", "-f", os.path.join(work, f"track-{run}.gpx"), gpsd],
                                     shutil.which("gpxlogger")),
}
results = {way: [] for way in ways}
gpsd_rss = []
try:
    for run in range(runs):
        print(f"run {run + 1} of {runs}", file=sys.stderr)
        for way, start in ways.items():
            results[way].append(start(run))
        gpsd_rss.append(memory(feed.gpsd.pid, os.path.realpath(shutil.which("gpsd")))[0])
finally:
    broker.terminate()
    broker.wait()
    feed.close()
    shutil.rmtree(work, ignore_errors=True)


def field(deb_field):
    return subprocess.run(["dpkg-deb", "-f", deb, deb_field], capture_output=True, text=True, check=True).stdout.strip()


def installed_kib(package):
    out = subprocess.run(["dpkg-query", "-W", "-f=${Installed-Size}", package], capture_output=True, text=True)
    return int(out.stdout) if out.returncode == 0 and out.stdout.strip() else None


contents = subprocess.run(["dpkg-deb", "-c", deb], capture_output=True, text=True, check=True).stdout.splitlines()
binaries = [(line.split()[5].lstrip("."), int(line.split()[2])) for line in contents
            if line.startswith("-rwx")]
installed = int(field("Installed-Size"))
med = {way: tuple(statistics.median(v[i] for v in values) for i in range(4)) for way, values in results.items()}
spread = {way: (min(v[0] for v in values), max(v[0] for v in values)) for way, values in results.items()}
target = 16.0

print("## Footprint (issue 55)\n")
print(f"Generated by `scripts/bench-footprint {runs}` on {datetime.date.today()} ({platform.machine()}, "
      f"kernel {platform.release()}). Each RSS is the median of {runs} runs (min-max), read {settle:.0f} s after the "
      "start on one real gpsd fed a live 1 Hz feed, the executable's pages dropped from the page cache before each start.\n")
print("| what | size |\n|---|---|")
print(f"| the package, installed (`Installed-Size`) | {installed / 1024:.1f} MiB ({installed:,} KiB) |")
for path, size in binaries:
    print(f"| `{path}` (stripped) | {size / 1048576:.1f} MiB |")
gpsd_kib = installed_kib("gpsd")
if gpsd_kib:
    print(f"| gpsd's package, installed (anchor) | {gpsd_kib / 1024:.1f} MiB |")
print(f"| gpxlogger (anchor) | {os.path.getsize(shutil.which('gpxlogger')) / 1024:.0f} KiB |")
print()
print("| process | RSS MB (median) | min-max | own binary | anonymous | shared libraries |\n|---|---|---|---|---|---|")
for way in ways:
    rss, own, anon, libraries = med[way]
    low, high = spread[way]
    print(f"| {'`keepalive ' + way + '`' if way != 'gpxlogger' else 'gpxlogger (anchor)'} | {rss:.1f} | {low:.1f}-{high:.1f} "
          f"| {own:.1f} | {anon:.1f} | {libraries:.1f} |")
print(f"| gpsd (anchor, feeding them all) | {statistics.median(gpsd_rss):.1f} | {min(gpsd_rss):.1f}-{max(gpsd_rss):.1f} | | | |")
journaling = med["run --journal --deliver mqtt://"][0]
print(f"\nTargets: the package at most 25 MB installed: **{'met' if installed * 1024 <= 25e6 else 'not met'}** "
      f"({installed * 1024 / 1e6:.1f} MB); the journaling service at most {target:.0f} MB of RSS: "
      f"**{'met' if journaling <= target else 'not met'}** ({journaling:.1f} MB).")
