#!/usr/bin/python3
"""A real RTSP server (gst-rtsp-server through GObject introspection) for taconitecamera's tests,
benches and pipelines/live-camera.sh, on 127.0.0.1 only: serves /cam, a generated live stream
(videotestsrc), a video file played in real time from its start for each client (--video, encoded
here; or --h264, an MP4 holding H.264 sent as it is, so a 1080p stream costs the server no encoding;
the file's end ends the stream, as a camera going away would; or --image, a still photo sent live
at --fps), until killed.

Usage: rtsp_server.py PORT [--codec jpeg|h264] [--size WxH] [--fps N] [--credentials FILE]
                      [--video FILE | --h264 FILE.mp4 | --image FILE] [--tls-cert PEM --tls-key PEM]
With --credentials (user name line, password line) the server asks for HTTP Basic authentication.
With --tls-cert and --tls-key it speaks RTSP over TLS only (rtsps://).
Prints "ready PORT" on stdout once it listens. Exits 77 without gst-rtsp-server's typelib.
"""
import argparse
import sys

import gi

gi.require_version("Gst", "1.0")
from gi.repository import Gio, GLib, Gst  # noqa: E402

try:
    gi.require_version("GstRtspServer", "1.0")
    from gi.repository import GstRtspServer  # noqa: E402
except (ValueError, ImportError):
    print("gir1.2-gst-rtsp-server-1.0 is not installed: skipped", file=sys.stderr)
    sys.exit(77)

ENCODERS = {
    # Both in Debian's gstreamer1.0-plugins-good / -bad; key frames often so a client starts fast.
    "jpeg": "jpegenc quality=60 ! rtpjpegpay name=pay0 pt=26",
    "h264": "openh264enc gop-size=15 complexity=low ! h264parse ! rtph264pay name=pay0 pt=96 config-interval=1",
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("--codec", choices=sorted(ENCODERS), default="jpeg")
    parser.add_argument("--size", default="320x240")
    parser.add_argument("--fps", type=int, default=15)
    parser.add_argument("--credentials")
    parser.add_argument("--video")
    parser.add_argument("--h264")
    parser.add_argument("--image")
    parser.add_argument("--tls-cert")
    parser.add_argument("--tls-key")
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.split("x"))

    Gst.init(None)
    server = GstRtspServer.RTSPServer()
    server.set_address("127.0.0.1")
    server.set_service(str(args.port))
    factory = GstRtspServer.RTSPMediaFactory()
    if args.video:
        source = (f'filesrc location="{args.video}" ! decodebin ! videoconvert ! videoscale ! '
                  f"video/x-raw,format=I420,width={width},height={height}")
    elif args.image:
        source = (f'filesrc location="{args.image}" ! decodebin ! videoconvert ! videoscale ! '
                  f"video/x-raw,format=I420,width={width},height={height} ! imagefreeze is-live=true ! "
                  f"video/x-raw,framerate={args.fps}/1")
    else:
        source = (f"videotestsrc is-live=true pattern=ball ! video/x-raw,format=I420,width={width},height={height},"
                  f"framerate={args.fps}/1")
    if args.h264:
        factory.set_launch(f'( filesrc location="{args.h264}" ! qtdemux ! h264parse ! '
                           f"rtph264pay name=pay0 pt=96 config-interval=1 )")
    else:
        factory.set_launch(f"( {source} ! {ENCODERS[args.codec]} )")
    factory.set_shared(not (args.video or args.h264))  # a file plays from its start for every client
    if args.credentials or args.tls_cert:
        auth = GstRtspServer.RTSPAuth()
        token = GstRtspServer.RTSPToken()
        token.set_string("media.factory.role", "viewer")
        if args.credentials:
            with open(args.credentials, encoding="utf-8") as f:
                user, password = (f.read().splitlines() + ["", ""])[:2]
            auth.add_basic(GstRtspServer.RTSPAuth.make_basic(user, password), token)
        else:
            auth.set_default_token(token)  # TLS without a password: every client may watch
        if args.tls_cert:
            auth.set_tls_certificate(Gio.TlsCertificate.new_from_files(args.tls_cert, args.tls_key))
        server.set_auth(auth)
        permissions = GstRtspServer.RTSPPermissions()
        permissions.add_permission_for_role("viewer", "media.factory.access", True)
        permissions.add_permission_for_role("viewer", "media.factory.construct", True)
        factory.set_permissions(permissions)
    server.get_mount_points().add_factory("/cam", factory)
    if server.attach(None) == 0:
        print(f"cannot listen on 127.0.0.1:{args.port}", file=sys.stderr)
        sys.exit(1)
    print(f"ready {args.port}", flush=True)
    GLib.MainLoop().run()


if __name__ == "__main__":
    main()
