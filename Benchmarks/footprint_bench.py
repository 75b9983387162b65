#!/usr/bin/env python3
"""The footprint on a small board (issue 55): the package's installed size, the binary's size,
and the resident memory of each way keepalive runs beside gpsd and gpxlogger, in one go.

Every process is measured on one real gpsd fed a live 1 Hz NMEA feed on a pseudo-terminal:
VmRSS after SETTLE seconds, and how much of it is the process's own binary, anonymous memory
and shared libraries (/proc/PID/smaps). Before each start the measured executable's pages are
dropped from the page cache (posix_fadvise DONTNEED), so that it is read from the disk as after
a boot: how many of its pages become resident depends on how the kernel reads a file in (its
readahead and the size of the page cache's folios), and a binary just written by the build is
cached differently. Each keepalive is measured again from a copy whose pages are read one by
one (see `PageByPage`): the pages it uses, against the pages this kernel maps.

    python3 Benchmarks/footprint_bench.py KEEPALIVE DEB RUNS [SETTLE] > Benchmarks/FOOTPRINT.md
"""
import datetime, os, platform, re, shutil, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "clients"))
from feeder import Feed, free_port  # noqa: E402

keepalive, deb, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
settle = float(sys.argv[4]) if len(sys.argv) > 4 else 15.0
work = tempfile.mkdtemp(prefix="footprint-")


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


def measure(command, executable=None, later=None):
    """The memory of `command` `settle` seconds after its start; with `later`, the same process's
    again `later` seconds after its start, too (a pair)."""
    executable = os.path.realpath(executable or command[0])
    uncache(executable)
    started = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        readings = []
        for at in [settle] + ([later] if later else []):
            time.sleep(max(0.0, started + at - time.monotonic()))
            if process.poll() is not None:
                sys.exit(f"footprint: {' '.join(command)} ended (status {process.returncode}) before it was measured")
            readings.append(memory(process.pid, executable))
        return tuple(readings) if later else readings[0]
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class PageByPage:
    """A copy of the binary on a small ext2 disk of its own (a loop device) whose readahead is
    off: each page it touches is read alone, so its RSS is the pages it uses, not the page
    cache's folios around them (what the kernel's readahead brought in, which a fault maps whole)."""

    def __init__(self, binary):
        self.image = os.path.join(work, "disk.img")
        self.mount = os.path.join(work, "disk")
        os.makedirs(self.mount)
        with open(self.image, "wb") as f:
            f.truncate(os.path.getsize(binary) + (64 << 20))
        subprocess.run(["mkfs.ext2", "-q", "-F", self.image], check=True)
        subprocess.run(["mount", "-o", "loop", self.image, self.mount], check=True)
        device = subprocess.run(["findmnt", "-n", "-o", "SOURCE", self.mount], capture_output=True, text=True,
                                check=True).stdout.strip()
        open(f"/sys/block/{os.path.basename(device)}/queue/read_ahead_kb", "w").write("0")
        self.binary = os.path.join(self.mount, "keepalive")
        shutil.copy(binary, self.binary)
        # The anchor's interpreter too (Debian's python3 links its libpython statically).
        self.python = os.path.join(self.mount, "python3")
        shutil.copy(os.path.realpath("/usr/bin/python3"), self.python)
        os.sync()

    def close(self):
        subprocess.run(["umount", self.mount], check=False)


feed = Feed(1, step=0.0)
page_by_page = PageByPage(keepalive)
gpsd = f"localhost:{feed.port}"
broker_port = free_port()
broker_conf = os.path.join(work, "mosquitto.conf")
open(broker_conf, "w").write(f"listener {broker_port} 127.0.0.1\nallow_anonymous true\npersistence false\n")
broker = subprocess.Popen(["mosquitto", "-c", broker_conf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
auth = os.path.join(work, "auth.json")
subprocess.run([keepalive, "auth", "set", "always", "--app", "bench", "--auth-file", auth], check=True, stdout=subprocess.DEVNULL)


def command(way, binary, run):
    """The command line of one way of running `binary`, or `None` for the anchors."""
    service = [binary, "run", "--app", "bench", "--auth-file", auth, "--gpsd", gpsd, "--audio-device", "null", "--json"]
    return {
        "watch": [binary, "watch", "--gpsd", gpsd, "--json"],
        "run": service,
        "run --journal --deliver mqtt://": service + [
            "--journal", os.path.join(work, f"journal-{binary == keepalive}-{run}.sqlite"),
            "--deliver", f"home=mqtt://127.0.0.1:{broker_port}/owntracks/bench/phone"],
        "host (no apps)": [binary, "host", "--socket", os.path.join(work, f"host-{run}.sock"),
                           "--name", f"keepalive-footprint-{os.getpid()}-{run}.service",
                           "--freezer", "signal", "--gpsd", gpsd, "--device-sleep", "off"],
    }.get(way)


ways = ["watch", "run", "run --journal --deliver mqtt://", "host (no apps)", "gpxlogger", "python"]
python_client = os.path.join(os.path.dirname(os.path.abspath(__file__)), "clients", "python_client.py")
results = {way: [] for way in ways}
exact = {way: [] for way in ways}
# The journaling service read again a while after its start: whether what start-up gave back stays given back.
later = 120.0
journaling_later = []
gpsd_rss = []
try:
    for run in range(runs):
        print(f"run {run + 1} of {runs}", file=sys.stderr)
        for way in ways:
            if way == "gpxlogger":
                results[way].append(measure(["gpxlogger", "-f", os.path.join(work, f"track-{run}.gpx"), gpsd],
                                            shutil.which("gpxlogger")))
                continue
            if way == "python":
                results[way].append(measure(["/usr/bin/python3", python_client, str(feed.port)], "/usr/bin/python3"))
                exact[way].append(measure([page_by_page.python, python_client, str(feed.port)]))
                continue
            if way == "run --journal --deliver mqtt://":
                first, again = measure(command(way, keepalive, run), later=later)
                results[way].append(first)
                journaling_later.append(again)
            else:
                results[way].append(measure(command(way, keepalive, run)))
            exact[way].append(measure(command(way, page_by_page.binary, run)))
        gpsd_rss.append(memory(feed.gpsd.pid, os.path.realpath(shutil.which("gpsd")))[0])
finally:
    broker.terminate()
    broker.wait()
    feed.close()
    page_by_page.close()
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
print("| process | RSS MB (median) | min-max | own binary | anonymous | shared libraries | RSS, the binary read page by page | of it, the binary's own |")
print("|---|---|---|---|---|---|---|---|")
for way in ways:
    rss, own, anon, libraries = med[way]
    low, high = spread[way]
    used = (f"{statistics.median(v[0] for v in exact[way]):.1f} | {statistics.median(v[1] for v in exact[way]):.1f}"
            if exact[way] else " | ")
    label = {"gpxlogger": "gpxlogger (anchor)", "python": "the Python gps module's client (anchor, as in 2.)"}.get(
        way, f"`keepalive {way}`")
    print(f"| {label} | {rss:.1f} | {low:.1f}-{high:.1f} "
          f"| {own:.1f} | {anon:.1f} | {libraries:.1f} | {used} |")
print(f"| gpsd (anchor, feeding them all) | {statistics.median(gpsd_rss):.1f} | {min(gpsd_rss):.1f}-{max(gpsd_rss):.1f} | | | | | |")
print("\n*Own binary* counts its relocated data with its code. *Read page by page*: the same binary run from a "
      "copy on an ext2 loop device with readahead off (`read_ahead_kb` 0), its pages dropped from the cache first: "
      "each page it touches is read alone, so the column is the pages the process uses; the first column is what "
      "the kernel maps when the binary is read as usual: it reads ahead of each fault and maps the cached pages "
      "around it. `run` and `host` give back the pages only their start-up used 10 s after they start "
      "(`StartUpPages`), before these readings, and the release link lays out the functions the journaling "
      "service runs once started together (`scripts/release.order`).")
print(f"\nThe journaling service read again {later:.0f} s after its start (the same processes): "
      f"**{statistics.median(v[0] for v in journaling_later):.1f} MB** "
      f"({min(v[0] for v in journaling_later):.1f}-{max(v[0] for v in journaling_later):.1f}), "
      f"own binary {statistics.median(v[1] for v in journaling_later):.1f} MB.")
journaling = med["run --journal --deliver mqtt://"][0]
journaling_later = statistics.median(v[0] for v in journaling_later)
journaling_used = statistics.median(v[0] for v in exact["run --journal --deliver mqtt://"])
print(f"\nTargets: the package at most 25 MB installed: **{'met' if installed * 1024 <= 25e6 else 'not met'}** "
      f"({installed * 1024 / 1e6:.1f} MB); the journaling service at most {target:.0f} MB of RSS, at both readings: "
      f"**{'met' if max(journaling, journaling_later) <= target else 'not met'}** ({journaling:.1f} MB {settle:.0f} s after "
      f"its start, {journaling_later:.1f} MB {later:.0f} s after; {journaling_used:.1f} MB with the binary read page by page).")
