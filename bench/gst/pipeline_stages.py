#!/usr/bin/python3
"""CPU per frame of each front-end stage and of whole recognition pipelines (not a test).

Usage: bench/gst/pipeline_stages.py [--build DIR] [--bundle DIR] [--model YUNET.onnx] [--rounds N]
                                    [--sizes 480,720] [--only TEXT,...] [--json FILE]

The video is the demo's synthetic camera (python3-skimage's astronaut panned and zoomed, one face
per frame, 10 fps MJPEG, pipelines/make_demo_video.py) at 480x480 and letterboxed to 1280x720. Each
pipeline `filesrc ! decodebin ! videoconvert ! STAGES ! fakesink` runs as its own gst-launch-1.0
process on a short and a long video; CPU ms per frame = (user+sys CPU of the long run - of the short
run) / (frames between them), so start-up (plugin scan, model and bundle loads) cancels out. Median
of --rounds. The stock Haar/HOG + dlib pipelines are the peers, run in the same script on the same
frames. Pipelines ending in taconitepublish also report faces and embeddings computed per frame
(from the documents' `status`), which is what `reinfer-mode=best` saves. Prints a markdown table
and, with --json, one JSON line per pipeline and size. --only runs the pipelines whose name
contains one of the texts (a quick check; the ratios need the stock chain).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHORT_S, LONG_S, FPS = 2, 8, 10
LBP = "/usr/share/opencv4/lbpcascades/lbpcascade_frontalface_improved.xml"


def pipelines(bundle, model, publish_to):
    adaface = f"taconiteadaface bundle={bundle} backend=cpu input-mode=rois"
    publish = f"taconitepublish method=file location={publish_to} stream=cam0 embedding=array"
    stock = [
        ("decode + videoconvert", ""),
        ("+ facedetect (Haar)", "facedetect display=false"),
        ("+ facedetect (LBP profile)", f"facedetect display=false profile={LBP}"),
        ("+ facedetect + taconitelandmarks", "facedetect display=false ! taconitelandmarks"),
        ("taconitelandmarks detect=always (HOG)", "taconitelandmarks detect=always"),
        ("stock chain: Haar > landmarks > track > adaface reinfer 5 > publish",
         f"facedetect display=false ! taconitelandmarks ! taconitetrack ! {adaface} reinfer-interval=5 ! {publish}"),
    ]
    if not model:
        return stock
    detect = f"taconitedetect model={model}"
    return stock + [
        ("taconitedetect (YuNet 640x384)", detect),
        ("taconitedetect interval=3", f"{detect} interval=3"),
        ("YuNet chain: detect > track > adaface reinfer 5 > publish",
         f"{detect} ! taconitetrack ! {adaface} reinfer-interval=5 ! {publish}"),
        ("YuNet chain, detect interval=3",
         f"{detect} interval=3 ! taconitetrack ! {adaface} reinfer-interval=5 ! {publish}"),
        ("YuNet chain, detect interval=3, adaface best-shot",
         f"{detect} interval=3 ! taconitetrack ! {adaface} reinfer-mode=best ! {publish}"),
    ]


def run(*args, **kwargs):
    return subprocess.run(args, check=True, **kwargs)


def make_videos(build, workdir, height):
    """The demo video of SHORT_S and LONG_S seconds at 480x480, or letterboxed to 16:9 `height`p."""
    videos = {}
    for seconds in (SHORT_S, LONG_S):
        square = os.path.join(workdir, f"camera-{seconds}s-480.avi")
        if not os.path.exists(square):
            run("/usr/bin/python3", os.path.join(ROOT, "pipelines", "make_demo_video.py"), square, "--seconds",
                str(seconds))
        if height == 480:
            videos[seconds] = square
            continue
        wide = os.path.join(workdir, f"camera-{seconds}s-{height}.avi")
        if not os.path.exists(wide):
            run("gst-launch-1.0", "-q", "filesrc", f"location={square}", "!", "decodebin", "!", "videoconvert", "!",
                "videoscale", "add-borders=true", "!", f"video/x-raw,width={height * 16 // 9},height={height}", "!",
                "jpegenc", "quality=90", "!", "avimux", "!", "filesink", f"location={wide}")
        videos[seconds] = wide
    return videos


def cpu_seconds(video, stages, env):
    description = f"filesrc location={video} ! decodebin ! videoconvert ! {stages + ' ! ' if stages else ''}" \
                  "fakesink sync=false"
    child = subprocess.Popen(["gst-launch-1.0", "-q"] + description.split(), env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(child.pid, 0)
    errors = child.stderr.read()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: gst-launch-1.0 {description}\n{errors}")
    return usage.ru_utime + usage.ru_stime


def faces_per_frame(path):
    """Faces and embeddings computed (not cached) per document of a taconitepublish file."""
    frames = faces = computed = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            frames += 1
            doc_faces = json.loads(line).get("faces", [])
            faces += len(doc_faces)
            computed += sum(face.get("status") == "computed" for face in doc_faces)
    return (faces / frames, computed / frames) if frames else (0.0, 0.0)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--bundle", help="an IR-18 bundle (default: a test bundle written with taconite-mkbundle)")
    parser.add_argument("--model", default=os.path.join(ROOT, "..", "shared", "models",
                                                        "face_detection_yunet_2023mar.onnx"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sizes", default="480,720")
    parser.add_argument("--only", help="run only the pipelines whose name contains one of these comma-separated texts")
    parser.add_argument("--json", help="append one JSON line per pipeline and size")
    args = parser.parse_args()
    workdir = os.path.join(tempfile.gettempdir(), "taconite-pipeline-stages")
    os.makedirs(workdir, exist_ok=True)
    bundle = args.bundle or os.path.join(workdir, "ir18")
    if not os.path.exists(os.path.join(bundle, "manifest.txt")):
        run(os.path.join(args.build, "tools", "taconite-mkbundle"), "--model", "ir18", "--out", bundle, "--force",
            stdout=subprocess.DEVNULL)
    model = args.model if os.path.isfile(args.model) else None
    if not model:
        print(f"no YuNet model at {args.model}: only the stock pipelines run", file=sys.stderr)
    env = dict(os.environ, GST_PLUGIN_PATH=os.path.join(args.build, "gst", "plugin"), OMP_WAIT_POLICY="passive")
    cpu = open("/proc/cpuinfo", encoding="utf-8").read()
    isa = "AVX-512" if " avx512f" in cpu else "AVX2" if " avx2" in cpu else "SSE"
    print(f"CPU ms per frame (user+sys of the gst-launch process, start-up subtracted), median of {args.rounds}; "
          f"{os.cpu_count()} cores, {isa}, load {os.getloadavg()[0]:.1f} at start")
    publish_to = os.path.join(workdir, "faces.jsonl")
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = {}
    for height in sizes:
        videos = make_videos(args.build, workdir, height)
        for name, stages in pipelines(bundle, model, publish_to):
            if args.only and not any(text in name for text in args.only.split(",")):
                continue
            per_frame = []
            for _ in range(args.rounds):
                short = cpu_seconds(videos[SHORT_S], stages, env)
                long = cpu_seconds(videos[LONG_S], stages, env)
                per_frame.append(1000 * (long - short) / ((LONG_S - SHORT_S) * FPS))
            faces, computed = faces_per_frame(publish_to) if "taconitepublish" in stages else (None, None)
            rows.setdefault(name, {})[height] = (statistics.median(per_frame), faces, computed)
            if args.json:
                with open(args.json, "a", encoding="utf-8") as f:
                    f.write(json.dumps({"pipeline": name, "height": height, "cpu_ms_per_frame": per_frame,
                                        "median": statistics.median(per_frame), "faces_per_frame": faces,
                                        "embeddings_per_frame": computed, "isa": isa}) + "\n")
    print("| pipeline | " + " | ".join(f"{h}p CPU ms/frame" for h in sizes) + " |")
    print("|---|" + "---|" * len(sizes))
    for name, by_size in rows.items():
        cells = []
        for h in sizes:
            ms, faces, computed = by_size[h]
            cells.append(f"{ms:.1f}" + (f" ({faces:.2f} faces, {computed:.2f} embedded /frame)"
                                        if faces is not None else ""))
        print(f"| {name} | " + " | ".join(cells) + " |")
    stock = next((n for n in rows if n.startswith("stock chain")), None)
    for name in rows if stock else []:
        if name.startswith("YuNet chain"):
            print(f"{name} / stock chain: " + ", ".join(
                f"{h}p {rows[name][h][0] / rows[stock][h][0]:.3f}x" for h in sizes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
