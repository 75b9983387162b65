"""What every test app under `keepalive host` does: connect to the apps' socket, say hello,
and answer the host's notices (the app is then frozen as soon as the rules say)."""
import json, os, socket, threading


class HostApp:
    def __init__(self, connection=None):
        if connection is None:
            connection = socket.socket(socket.AF_UNIX)
            connection.connect(os.environ["KEEPALIVE_HOST_SOCKET"])
        self.lines = connection.makefile("rw")
        self.lock = threading.Lock()
        self.send({"id": 1, "op": "hello", "app": os.environ["KEEPALIVE_APP"]})

    def send(self, message):
        with self.lock:
            self.lines.write(json.dumps(message) + "\n")
            self.lines.flush()

    def serve(self):
        """Answers the lifecycle and will-suspend notices until the host closes the connection."""
        for line in self.lines:
            notice = json.loads(line)
            if notice.get("notice") == "lifecycle":
                self.send({"op": "ack", "notice": notice["event"]})
            if notice.get("notice") == "will-suspend":
                self.send({"op": "ack", "notice": "will-suspend"})
