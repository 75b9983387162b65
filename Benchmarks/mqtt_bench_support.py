"""What the MQTT benchmarks share: a free port, a mosquitto of their own, a keepalive-bench line,
a timed command, and a median with its range."""
import os, socket, statistics, subprocess, time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def broker(work, nodelay=True):
    port = free_port()
    conf = f"{work}/mosquitto-{port}.conf"
    with open(conf, "w") as f:
        f.write(f"user root\nlistener {port} 127.0.0.1\nallow_anonymous true\nmax_queued_messages 0\n")
        if nodelay:
            f.write("set_tcp_nodelay true\n")
    process = subprocess.Popen(["mosquitto", "-c", conf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), 0.1).close()
            return process, port
        except OSError:
            time.sleep(0.05)
    raise SystemExit("mosquitto did not start")


def bench_line(bench, *arguments):
    out = subprocess.run([bench, *arguments], capture_output=True, text=True, check=True).stdout.split("\n")
    return {line.split()[0]: [float(x) for x in line.split()[1:]] for line in out if line}


def timed(command, stdin=None):
    start = time.perf_counter()
    before = os.times()
    subprocess.run(command, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    after = os.times()
    return time.perf_counter() - start, (after.children_user - before.children_user) + (after.children_system - before.children_system)


def summary(values):
    return f"{statistics.median(values):,.0f} ({min(values):,.0f}-{max(values):,.0f})"
