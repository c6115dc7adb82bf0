"""Real components for the app MQTT tests: a mosquitto broker on 127.0.0.1 (private directory, free
port, optional password file and TLS listener), a mosquitto_sub subscriber on '#' that keeps every
message with its retain flag and exact bytes, and the ha_mqtt_host process driven line by line."""
import getpass
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

MOSQUITTO = shutil.which("mosquitto") or ("/usr/sbin/mosquitto" if os.access("/usr/sbin/mosquitto", os.X_OK) else None)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(predicate, timeout_s, what):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")


class Broker:
    def __init__(self, port=None, user=None, password=None, tls=False, client_certificates=False):
        self.dir = tempfile.mkdtemp(prefix="taconite-app-mqtt-")
        self.port = port or free_port()
        self.user, self.password, self.process = user, password, None
        # As root, mosquitto would switch to its own user, who cannot read our private directory.
        lines = [f"listener {self.port} 127.0.0.1", "persistence false", f"user {getpass.getuser()}"]
        if user:
            self.write_passwords({user: password})
            lines += ["allow_anonymous false", f"password_file {self.dir}/passwd"]
        else:
            lines.append("allow_anonymous true")
        if tls:
            self.ca = write_certificates(self.dir)
            lines += [f"cafile {self.ca}", f"certfile {self.dir}/server.pem", f"keyfile {self.dir}/server.key"]
            if client_certificates:  # only clients with a certificate our CA signed
                lines.append("require_certificate true")
        with open(f"{self.dir}/mosquitto.conf", "w") as f:
            f.write("\n".join(lines) + "\n")

    def write_passwords(self, users):
        """The password file: `users` (name -> password) may connect; the broker rereads it on reload()."""
        path = f"{self.dir}/passwd"
        if os.path.exists(path):
            os.remove(path)
        for name, password in users.items():
            create = [] if os.path.exists(path) else ["-c"]
            subprocess.run(["mosquitto_passwd", "-b", *create, path, name, password], check=True)

    def reload(self):
        self.process.send_signal(signal.SIGHUP)

    def start(self):
        self.process = subprocess.Popen([MOSQUITTO, "-c", f"{self.dir}/mosquitto.conf"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        def accepts():
            with socket.socket() as s:
                return s.connect_ex(("127.0.0.1", self.port)) == 0
        wait_until(accepts, 20, f"mosquitto on port {self.port}")
        return self

    def stop(self):
        if self.process:
            self.process.terminate()
            self.process.wait(10)
            self.process = None

    def close(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def write_certificates(directory):
    """A CA, a certificate for 127.0.0.1 and a client certificate it signed (server.pem / .key,
    client.pem / .key; openssl); returns the CA file."""
    script = (
        "set -e; cd \"$1\"; "
        "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=test-ca "
        "-keyout ca.key -out ca.pem; "
        "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=127.0.0.1 "
        "-keyout server.key -out server.csr; "
        "printf 'subjectAltName=IP:127.0.0.1\\n' > ext; "
        "openssl x509 -req -days 2 -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -extfile ext "
        "-out server.pem; "
        "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=taconite "
        "-keyout client.key -out client.csr; "
        "openssl x509 -req -days 2 -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out client.pem")
    subprocess.run(["sh", "-c", script, "sh", directory], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return f"{directory}/ca.pem"


class Subscriber:
    """mosquitto_sub on '#': messages as (retained, topic, payload bytes), in arrival order."""

    def __init__(self, broker, ca=None):
        args = ["mosquitto_sub", "-h", "127.0.0.1", "-p", str(broker.port), "-t", "#", "-q", "1",
                "-F", "%r %t %x"]
        if broker.user:
            args += ["-u", broker.user, "-P", broker.password]
        if ca:
            args += ["--cafile", ca, "--cert", f"{broker.dir}/client.pem", "--key", f"{broker.dir}/client.key"]
        self.messages, self.lock = [], threading.Lock()
        self.process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        threading.Thread(target=self._read, daemon=True).start()
        # A probe of our own: once it is back, the subscription is in place.
        probe = f"probe/{time.monotonic_ns()}"
        probe_args = ["mosquitto_pub", "-h", "127.0.0.1", "-p", str(broker.port), "-t", probe, "-m", "p"]
        probe_args += (["-u", broker.user, "-P", broker.password] if broker.user else [])
        probe_args += (["--cafile", ca, "--cert", f"{broker.dir}/client.pem", "--key", f"{broker.dir}/client.key"]
                       if ca else [])

        def probed():
            subprocess.run(probe_args, check=False, stderr=subprocess.DEVNULL)
            return any(t == probe for _, t, _ in self.all())
        wait_until(probed, 20, "the subscriber's probe")

    def _read(self):
        for line in self.process.stdout:
            line = line.rstrip("\n")
            # "R TOPIC HEX": a topic may hold spaces, the hex never does (empty for an empty payload).
            topic, payload = line[2:].rsplit(" ", 1)
            with self.lock:
                self.messages.append((line[0] == "1", topic, bytes.fromhex(payload)))

    def all(self):
        with self.lock:
            return list(self.messages)

    def on(self, topic):
        return [(r, p) for r, t, p in self.all() if t == topic]

    def last(self, topic):
        got = self.on(topic)
        return got[-1][1] if got else None

    def wait_for(self, topic, payload=None, timeout_s=10):
        def seen():
            return any(payload is None or p == payload for _, p in self.on(topic))
        return wait_until(seen, timeout_s, f"{topic} {payload!r}")

    def close(self):
        # mosquitto_sub ends on SIGTERM only between writes: one blocked on a full pipe (thousands of
        # messages still unread) is killed instead.
        self.process.terminate()
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)


class Host:
    """ha_mqtt_host: one JSON command per line, one answer line back."""

    # With a directory here, every host runs under valgrind memcheck, logging into it.
    valgrind_dir = None

    def __init__(self, program):
        self.stderr = tempfile.TemporaryFile(mode="w+")
        args = [program]
        if Host.valgrind_dir:
            args = ["valgrind", "-q", "--leak-check=full", "--errors-for-leak-kinds=definite",
                    f"--log-file={Host.valgrind_dir}/memcheck.%p.log"] + args
        self.process = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=self.stderr, text=True)

    def send(self, **command):
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline()
        assert answer, f"ha_mqtt_host ended: {self.log()}"
        return json.loads(answer) if answer.startswith("{") else answer.strip()

    def log(self):
        self.stderr.seek(0)
        return self.stderr.read()

    def kill(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def close(self):
        if self.process.poll() is None:
            self.process.stdin.close()
            self.process.wait(10)
