# The Python gps module client for the gpsd client benchmark: watches gpsd in JSON, reads every
# report, counts TPVs, prints the count on SIGTERM or SIGINT.  usage: python_client.py PORT
import signal, sys
import gps

stop = False
def on_signal(signo, frame):
    global stop
    stop = True
signal.signal(signal.SIGTERM, on_signal)
signal.signal(signal.SIGINT, on_signal)
session = gps.gps(host="localhost", port=sys.argv[1], mode=gps.WATCH_ENABLE | gps.WATCH_JSON)
count = 0
while not stop:
    try:
        if not session.waiting(0.5):
            continue
        if session.read() < 0:
            break
    except (OSError, StopIteration):
        break
    if session.data.get("class") == "TPV":
        count += 1
print(count)
