"""An MJPEG-over-HTTP camera for taconitecamera's tests, on 127.0.0.1 only: every GET of /cam gets
multipart/x-mixed-replace JPEG frames (made by a real videotestsrc ! jpegenc pipeline) until the
server stops, which closes every connection as a camera losing power would. With `credentials`
(user, password) it asks for HTTP Basic authentication."""
import base64
import http.server
import threading

from gi.repository import Gst

BOUNDARY = b"taconiteframe"


class _Frames:
    """The newest JPEG of a live videotestsrc, and a condition to wait for the next one."""

    def __init__(self, fps):
        self.pipeline = Gst.parse_launch(
            f"videotestsrc is-live=true pattern=ball ! video/x-raw,format=I420,width=320,height=240,"
            f"framerate={fps}/1 ! jpegenc quality=60 ! appsink name=out emit-signals=true sync=false max-buffers=1 "
            f"drop=true")
        self.changed = threading.Condition()
        self.jpeg, self.count = None, 0
        self.pipeline.get_by_name("out").connect("new-sample", self._sample)
        self.pipeline.set_state(Gst.State.PLAYING)

    def _sample(self, sink):
        buffer = sink.emit("pull-sample").get_buffer()
        with self.changed:
            self.jpeg = buffer.extract_dup(0, buffer.get_size())
            self.count += 1
            self.changed.notify_all()
        return Gst.FlowReturn.OK

    def next(self, after, timeout=2.0):
        with self.changed:
            self.changed.wait_for(lambda: self.count > after, timeout)
            return self.count, self.jpeg

    def stop(self):
        self.pipeline.set_state(Gst.State.NULL)


class MjpegServer:
    def __init__(self, port, credentials=None, fps=10):
        self.port, self.fps, self.httpd, self.thread, self.frames = port, fps, None, None, None
        self.expected = None
        if credentials:
            self.expected = "Basic " + base64.b64encode(f"{credentials[0]}:{credentials[1]}".encode()).decode()
        self.stopping = threading.Event()

    def start(self):
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):
                if self.path != "/cam":
                    self.send_error(404, "Not Found")
                    return
                if server.expected and self.headers.get("Authorization") != server.expected:
                    self.send_response(401, "Unauthorized")
                    self.send_header("WWW-Authenticate", 'Basic realm="camera"')
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", f"multipart/x-mixed-replace; boundary={BOUNDARY.decode()}")
                self.end_headers()
                seen = 0
                try:
                    while not server.stopping.is_set():
                        seen, jpeg = server.frames.next(seen)
                        if jpeg is None:
                            continue
                        self.wfile.write(b"--" + BOUNDARY + b"\r\nContent-Type: image/jpeg\r\nContent-Length: " +
                                         str(len(jpeg)).encode() + b"\r\n\r\n" + jpeg + b"\r\n")
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.stopping.clear()
        self.frames = _Frames(self.fps)
        http.server.ThreadingHTTPServer.allow_reuse_address = True
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.1})
        self.thread.start()

    def stop(self):
        """Stops listening and ends every stream (the handlers see `stopping` within a frame)."""
        if not self.httpd:
            return
        self.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=10)
        self.frames.stop()
        self.httpd = None
