"""Debian's chromium, headless, driven over the DevTools protocol on a pipe
(--remote-debugging-pipe: NUL-terminated JSON messages, commands on fd 3, replies on fd 4), with
the Python standard library only."""
import base64
import json
import os
import shutil
import subprocess
import tempfile
import time


class Chromium:
    def __init__(self, width=1100, height=760):
        exe = shutil.which("chromium")
        if not exe:
            raise FileNotFoundError("chromium")
        self.profile = tempfile.mkdtemp(prefix="app-web-chromium-")
        to_child_r, self.to_child = os.pipe()
        self.from_child, from_child_w = os.pipe()

        # The pipes become chromium's fds 3 and 4 through the shell's redirections. --no-sandbox: the
        # tests may run as root, where chromium's sandbox refuses to start.
        self.proc = subprocess.Popen(
            ["/bin/sh", "-c", f'exec "$0" "$@" 3<&{to_child_r} 4>&{from_child_w}', exe,
             "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
             f"--user-data-dir={self.profile}", f"--window-size={width},{height}", "--no-first-run",
             "--hide-scrollbars", "about:blank"],
            pass_fds=(to_child_r, from_child_w), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_child_r)
        os.close(from_child_w)
        self.next_id = 0
        self.buffer = b""
        self.session = None
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.call("Page.enable")
        self.call("Runtime.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)

    def _read_message(self, deadline):
        while b"\0" not in self.buffer:
            if time.time() > deadline:
                raise TimeoutError("chromium did not answer")
            chunk = os.read(self.from_child, 1 << 16)
            if not chunk:
                raise EOFError("chromium closed its pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method, timeout=60, **params):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params}
        if self.session:
            message["sessionId"] = self.session
        os.write(self.to_child, json.dumps(message).encode() + b"\0")
        deadline = time.time() + timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def evaluate(self, expression):
        """The value of a JavaScript expression in the page (promises awaited)."""
        r = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expression}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def navigate(self, url):
        self.call("Page.navigate", url=url)

    def wait_for(self, expression, timeout=60, explain="document.getElementById('status').textContent"):
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                value = self.evaluate(expression)
            except RuntimeError:  # the page is still loading (no body yet)
                value = None
            if value:
                return value
            time.sleep(0.1)
        raise TimeoutError(f"the page never made {expression} true ({explain}: {self.evaluate(explain)!r})")

    def screenshot(self, path):
        data = self.call("Page.captureScreenshot", format="png")["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        try:
            self.call("Browser.close", timeout=10)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.to_child)
        os.close(self.from_child)
        shutil.rmtree(self.profile, ignore_errors=True)
