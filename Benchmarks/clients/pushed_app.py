"""An app under `keepalive host` that is pushed to: it names a datagram socket for
wake-on-data and, while it runs, writes a line every 100 ms to its beats file: the monotonic
time and how many bytes it read from the socket since the last line.

    python3 pushed_app.py SOCKET BEATS      (KEEPALIVE_HOST_SOCKET and KEEPALIVE_APP set by the host)

Used by HostileAppTests and Benchmarks/hostile_bench.py.
"""
import os, socket, sys, threading, time
from host_app import HostApp

data = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
data.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o666)
data.setblocking(False)
app = HostApp()
app.send({"id": 2, "op": "wake-on-data", "sockets": [data.fileno()]})
threading.Thread(target=app.serve, daemon=True).start()
beats = open(sys.argv[2], "a")
while True:
    got = 0
    while True:
        try:
            got += len(data.recv(64))
        except BlockingIOError:
            break
    beats.write("%.6f %d\n" % (time.clock_gettime(time.CLOCK_MONOTONIC), got))
    beats.flush()
    time.sleep(0.1)
