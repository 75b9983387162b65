#!/usr/bin/env python3
"""The functions the journaling service runs once started, for the release link's order
(scripts/make-release-order, issue 55). Prints them, one symbol a line, in address order.

The binary is a profiling link of the release build (scripts/release-profile.ld): every
function on a page of its own, so that a page the service touches names one function. It runs
as the footprint benchmark runs it (`run --journal --deliver mqtt://` on a real gpsd fed a live
1 Hz feed, here driving for two minutes and parked after), from a copy on a small ext2 disk of
its own whose readahead is off, so that the page cache holds only pages the service read.
Twenty seconds after its start (start-up over, its start-up pages given back at ten), its text
is paged out (process_madvise(MADV_PAGEOUT)) and the copy's unmapped pages dropped from the
cache; from then on a page is mapped only when the service runs code in it, and the fault
mapping it can add only pages that are mapped already. What is mapped at the end is what the
service runs steadily: each fix, the minute's group commit, delivery, the stationary check.

    python3 Benchmarks/release_order.py PROFILE_BINARY [SECONDS] > scripts/release.order
"""
import bisect, ctypes, os, shutil, struct, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "clients"))
from feeder import Feed, free_port  # noqa: E402

profiled, seconds = sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 540.0
start_up = 20.0
work = tempfile.mkdtemp(prefix="release-order-")
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
SYS_pidfd_open, SYS_process_madvise, MADV_PAGEOUT = 434, 440, 21


class IOVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("length", ctypes.c_size_t)]


def text_mapping(pid, path):
    """(start, end, file offset) of `path`'s executable mapping in process `pid`."""
    for line in open(f"/proc/{pid}/maps"):
        fields = line.split()
        if len(fields) > 5 and fields[5] == path and fields[1].startswith("r-x"):
            start, end = (int(x, 16) for x in fields[0].split("-"))
            return start, end, int(fields[2], 16)
    sys.exit(f"release_order: no executable mapping of {path} in process {pid}")


def mapped_offsets(pid, path):
    """The file offsets of the pages of `path`'s text that process `pid` has mapped (pagemap)."""
    start, end, offset = text_mapping(pid, path)
    with open(f"/proc/{pid}/pagemap", "rb") as pagemap:
        pagemap.seek(start // 4096 * 8)
        entries = pagemap.read((end - start) // 4096 * 8)
    return [offset + i * 4096 for i in range(len(entries) // 8) if struct.unpack_from("<Q", entries, i * 8)[0] >> 63]


def page_out(pid, path):
    """Unmaps and evicts every page of `path`'s text in process `pid`; then drops the file's pages
    that nothing maps from the cache."""
    start, end, _ = text_mapping(pid, path)
    pidfd = libc.syscall(SYS_pidfd_open, pid, 0)
    if pidfd < 0:
        sys.exit(f"release_order: pidfd_open: {os.strerror(ctypes.get_errno())} (run as root)")
    try:
        for at in range(start, end, 1 << 30):
            vector = IOVec(at, min(1 << 30, end - at))
            if libc.syscall(SYS_process_madvise, pidfd, ctypes.byref(vector), 1, MADV_PAGEOUT, 0) < 0:
                sys.exit(f"release_order: process_madvise: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(pidfd)
    descriptor = os.open(path, os.O_RDONLY)
    os.posix_fadvise(descriptor, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(descriptor)


def functions(binary):
    """(address, name) of every function symbol, by address."""
    listing = subprocess.run(["nm", "-n", "--defined-only", binary], capture_output=True, text=True, check=True)
    symbols = []
    for line in listing.stdout.splitlines():
        fields = line.split(maxsplit=2)
        if len(fields) == 3 and fields[1] in "tTwW":
            symbols.append((int(fields[0], 16), fields[2]))
    return symbols


def text_address(binary):
    """How much a text page's virtual address exceeds its file offset."""
    headers = subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True, check=True).stdout
    for line in headers.splitlines():
        fields = line.split()
        if fields[:1] == ["LOAD"] and fields[6:7] == ["R"] and fields[7:8] == ["E"]:
            return int(fields[2], 16) - int(fields[1], 16)
    sys.exit(f"release_order: no executable segment in {binary}")


image, mount = os.path.join(work, "disk.img"), os.path.join(work, "disk")
os.makedirs(mount)
with open(image, "wb") as f:
    f.truncate(os.path.getsize(profiled) + (64 << 20))
subprocess.run(["mkfs.ext2", "-q", "-F", image], check=True)
subprocess.run(["mount", "-o", "loop", image, mount], check=True)
feed = broker = None
try:
    device = subprocess.run(["findmnt", "-n", "-o", "SOURCE", mount], capture_output=True, text=True, check=True).stdout
    open(f"/sys/block/{os.path.basename(device.strip())}/queue/read_ahead_kb", "w").write("0")
    binary = os.path.join(mount, "keepalive")
    shutil.copy(profiled, binary)
    os.chmod(binary, 0o755)
    os.sync()
    # Two minutes at about 18 m/s north, then parked.
    feed = Feed(1, latitude=lambda index: 4807.038 + min(index, 120) * 0.01)
    broker_port = free_port()
    conf = os.path.join(work, "mosquitto.conf")
    open(conf, "w").write(f"listener {broker_port} 127.0.0.1\nallow_anonymous true\npersistence false\n")
    broker = subprocess.Popen(["mosquitto", "-c", conf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    auth = os.path.join(work, "auth.json")
    subprocess.run([binary, "auth", "set", "always", "--app", "bench", "--auth-file", auth], check=True,
                   stdout=subprocess.DEVNULL)
    page_out_at = time.monotonic() + start_up
    service = subprocess.Popen(
        [binary, "run", "--app", "bench", "--auth-file", auth, "--gpsd", f"localhost:{feed.port}",
         "--audio-device", "null", "--json", "--journal", os.path.join(work, "journal.sqlite"),
         "--deliver", f"home=mqtt://127.0.0.1:{broker_port}/owntracks/bench/phone"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(max(0.0, page_out_at - time.monotonic()))
        page_out(service.pid, binary)
        left = len(mapped_offsets(service.pid, binary))
        print(f"release_order: text paged out at {start_up:.0f} s ({left} pages left mapped)", file=sys.stderr)
        time.sleep(max(0.0, page_out_at - start_up + seconds - time.monotonic()))
        if service.poll() is not None:
            sys.exit(f"release_order: the service ended (status {service.returncode}) before it was read")
        offsets = mapped_offsets(service.pid, binary)
    finally:
        service.terminate()
        service.wait()
finally:
    if broker:
        broker.terminate()
        broker.wait()
    if feed:
        feed.close()
    subprocess.run(["umount", mount], check=False)
    shutil.rmtree(work, ignore_errors=True)

symbols = functions(profiled)
addresses = [address for address, _ in symbols]
shift = text_address(profiled)
ordered, seen = [], set()
for offset in offsets:
    page = offset + shift
    # The function that covers the page, and any that begins in it (one, as each has a page).
    first = max(0, bisect.bisect_right(addresses, page) - 1)
    last = bisect.bisect_left(addresses, page + 4096)
    for _, name in symbols[first:last]:
        if name not in seen:
            seen.add(name)
            ordered.append(name)
print(f"release_order: {len(offsets)} pages run steadily after {seconds:.0f} s, {len(ordered)} functions",
      file=sys.stderr)
sys.stdout.write("".join(name + "\n" for name in ordered))
