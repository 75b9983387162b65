"""An app under `keepalive host` that opens COUNT connections to the host and holds them,
says hello on the first and answers the host's notices, so that it is frozen with them all.

    python3 hoarder_app.py COUNT      (KEEPALIVE_HOST_SOCKET and KEEPALIVE_APP set by the host)

Used by HostileAppTests and Benchmarks/hostile_bench.py.
"""
import os, socket, sys
from host_app import HostApp

held = []
for _ in range(int(sys.argv[1])):
    connection = socket.socket(socket.AF_UNIX)
    connection.connect(os.environ["KEEPALIVE_HOST_SOCKET"])
    held.append(connection)
HostApp(held[0]).serve()
