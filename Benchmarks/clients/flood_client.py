"""A local user's flood of a host socket: opens COUNT connections to SOCKET and holds them,
every other one with a request begun and fed a byte a second. Prints "ready" and writes the
count to READY (when given) once all are open.

    python3 flood_client.py SOCKET COUNT [READY]

Used by HostileAppTests and Benchmarks/hostile_bench.py (as nobody).
"""
import resource, socket, sys, time

soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
held = []
for i in range(int(sys.argv[2])):
    connection = socket.socket(socket.AF_UNIX)
    connection.connect(sys.argv[1])
    held.append(connection)
    if i % 2:
        connection.send(b'{"op"')
if len(sys.argv) > 3:
    open(sys.argv[3], "w").write(str(len(held)))
print("ready", flush=True)
while True:
    time.sleep(1)
    for connection in held[1::2]:
        try:
            connection.send(b" ")
        except OSError:
            pass
