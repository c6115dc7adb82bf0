#!/usr/bin/python3
"""PyTorch fp32 eager peer for the cpu backend benchmark, on the bundle's own weights.

Rebuilds the network from a bundle directory (manifest.txt + tensors.txt + tensors.bin) in
PyTorch: conv weights unpacked from the packed layout of spec section 5.3 (the same
[oc/8][icg/8][ky][kx][i8][o8] layout runtime/numerics/weight_packing.cpp unpacks), input-channel
groups merged, conv -> [bias | prelu_bias] -> [subsample(s)] folded into one (strided) conv with
bias and PReLU as the cpu backend does (and as the original model is built), other subsamples as
1x1 max pooling, affine as an inference batch norm, the head as a Linear.
Measures warm median latency / throughput and can export the same network to ONNX (for OpenCV DNN
and ONNX Runtime).

usage: torch_bench.py BUNDLE THREADS BATCH... [--onnx PREFIX] [--ort-onnx PREFIX [--ort-affine KIND]]
                      [--face OUT.f32 --ref OUT.f32]
(--onnx writes PREFIX.b<BATCH>.onnx for every batch size with the affine as a depthwise 1x1 conv, the
form OpenCV DNN 4.6 runs; --ort-onnx the same files with the affine as KIND: batchnorm (default),
muladd or depthwise; --face and --ref the input face and the fp32 reference embedding as raw f32)
Prints one JSON line.
"""
import argparse
import json
import resource
import statistics
import time

import numpy as np
import torch
import torch.nn.functional as F


def read_tensors(bundle):
    blob = np.memmap(f"{bundle}/tensors.bin", dtype=np.uint8, mode="r")
    tensors = {}
    for line in open(f"{bundle}/tensors.txt"):
        fields = line.split()
        if len(fields) != 5:
            continue
        name, dtype, _shape, offset, size = fields
        raw = np.asarray(blob[int(offset):int(offset) + int(size)])
        if dtype == "bf16":
            values = (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
        elif dtype == "f32":
            values = raw.view(np.float32)
        else:
            continue
        tensors[name] = values
    return tensors


def read_steps(bundle):
    steps = []
    for line in open(f"{bundle}/manifest.txt"):
        fields = line.split()
        if not fields or fields[0].startswith("#") or fields[0] in ("version", "param", "xclbin"):
            continue
        record = {"tag": fields[0]}
        for field in fields[1:]:
            if "=" in field:
                key, value = field.split("=", 1)
                record[key] = value
        steps.append(record)
    return steps


def unpack_conv(packed, oc, icg):
    """Spec 5.3: packed [oc/8][icg/8][ky][kx][i8][o8] -> OIHW."""
    k = 3 if packed.size == oc * icg * 9 else 1
    blocks = packed.reshape(oc // 8, icg // 8, k, k, 8, 8)  # og, ig, ky, kx, i8, o8
    return blocks.transpose(0, 5, 1, 4, 2, 3).reshape(oc, icg, k, k), k


class BundleNet(torch.nn.Module):
    """The bundle's steps as PyTorch ops on NCHW tensors (input: 3-channel faces)."""

    def __init__(self, bundle, real_channels=3):
        super().__init__()
        # How forward() computes the affine x*scale + shift: "batchnorm" (an inference batch norm),
        # "depthwise" (a depthwise 1x1 conv) or "muladd". OpenCV 4.6 imports neither this exporter's
        # batch norm (Identity-shared constants) nor a Mul+Add scale-shift at batch > 1, so its ONNX
        # files get the depthwise conv; ONNX Runtime's get the form it runs fastest (--ort-onnx).
        self.affine_as = "batchnorm"
        tensors = read_tensors(bundle)
        steps = read_steps(bundle)
        self.ops = []  # (kind, args) interpreted by forward()
        self.params = torch.nn.ParameterList()
        i = 0
        input_live = False  # does the input step's buffer still hold the face?
        while i < len(steps):
            s = steps[i]
            tag = s["tag"]
            if tag != "input" and s.get("out", s.get("buf")) == getattr(self, "input_buf", None):
                input_live = False  # redefined (or changed in place) by a later step
            if tag == "input":
                self.input_buf = s["buf"]
                input_live = True
                self.ops.append(("input", s["buf"]))
            elif tag == "conv":
                oc, ict = int(s["oc"]), int(s["ict"])
                records = [s]
                while records[-1]["last"] != "1":
                    i += 1
                    records.append(steps[i])
                weight = np.zeros((oc, ict, 3, 3), np.float32)
                for r in records:
                    w, k = unpack_conv(tensors[r["wt"]], oc, int(r["icg"]))
                    c0 = 8 * int(r["c0"])
                    weight = weight[:, :, :k, :k]
                    weight[:, c0:c0 + int(r["icg"])] = w
                if s["in"] == self.input_buf and input_live:
                    weight = weight[:, :real_channels]  # the stem's padding channels are zero
                out, bias, alpha, stride = s["out"], None, None, 1
                # Fold conv -> [bias | prelu_bias on out] -> [subsample(out)] into one strided conv
                # with a bias (+ PReLU), as the cpu backend does (and as the original model is).
                j = i + 1
                if j < len(steps) and steps[j]["tag"] in ("bias", "prelu_bias") and steps[j]["buf"] == out:
                    bias = tensors[steps[j]["bias"]]
                    if steps[j]["tag"] == "prelu_bias":
                        alpha = self._param(tensors[steps[j]["alpha"]])
                    j += 1
                if j < len(steps) and steps[j]["tag"] == "subsample" and steps[j]["in"] == out:
                    stride = int(steps[j]["stride"])
                    out = steps[j]["out"]
                    j += 1
                i = j - 1
                w = self._param(weight)
                b = self._param(bias) if bias is not None else None
                self.ops.append(("conv", (s["in"], out, w, b, stride, weight.shape[-1] // 2, alpha)))
            elif tag == "affine":
                channels = int(s["c"])
                self.ops.append(("affine", (s["in"], s["out"], self._param(tensors[s["scale"]]),
                                            self._param(tensors[s["shift"]]), self._param(np.zeros(channels)),
                                            self._param(np.ones(channels)))))
            elif tag == "prelu_bias":
                self.ops.append(("prelu_bias", (s["buf"], self._param(tensors[s["alpha"]]),
                                                self._param(tensors[s["bias"]], per_channel=True))))
            elif tag == "bias":
                self.ops.append(("bias", (s["buf"], self._param(tensors[s["bias"]], per_channel=True))))
            elif tag == "subsample":
                self.ops.append(("subsample", (s["in"], s["out"], int(s["stride"]))))
            elif tag == "add":
                self.ops.append(("add", (s["a"], s["b"], s["out"])))
            elif tag == "head":
                k, n = int(s["k"]), int(s["n"])
                self.ops.append(("head", (s["in"], self._param(tensors[s["bT"]].reshape(k, n).T.copy()),
                                          self._param(tensors[s["b2"]]))))
            i += 1

    def _param(self, values, per_channel=False):
        t = torch.from_numpy(np.array(values, dtype=np.float32, copy=True))
        if per_channel:
            t = t.reshape(1, -1, 1, 1)
        p = torch.nn.Parameter(t, requires_grad=False)
        self.params.append(p)
        return p

    def forward(self, face):
        buf = {}
        for kind, a in self.ops:
            if kind == "input":
                buf[a] = face
            elif kind == "conv":
                src, out, w, b, stride, pad, alpha = a
                y = F.conv2d(buf[src], w, b, stride=stride, padding=pad)
                buf[out] = F.prelu(y, alpha) if alpha is not None else y
            elif kind == "affine" and self.affine_as == "depthwise":
                channels = a[2].shape[0]
                buf[a[1]] = F.conv2d(buf[a[0]], a[2].reshape(channels, 1, 1, 1), a[3], groups=channels)
            elif kind == "affine" and self.affine_as == "muladd":
                buf[a[1]] = buf[a[0]] * a[2].reshape(1, -1, 1, 1) + a[3].reshape(1, -1, 1, 1)
            elif kind == "affine":  # x*scale + shift as an inference batch norm (mean 0, variance 1, eps 0)
                buf[a[1]] = F.batch_norm(buf[a[0]], a[4], a[5], a[2], a[3], False, 0.0, 0.0)
            elif kind == "prelu_bias":
                buf[a[0]] = F.prelu(buf[a[0]] + a[2], a[1])
            elif kind == "bias":
                buf[a[0]] = buf[a[0]] + a[1]
            elif kind == "subsample":
                buf[a[1]] = F.max_pool2d(buf[a[0]], kernel_size=1, stride=a[2])
            elif kind == "add":
                buf[a[2]] = buf[a[0]] + buf[a[1]]
            elif kind == "head":
                return F.linear(torch.flatten(buf[a[0]], 1), a[1], a[2])
        raise RuntimeError("bundle has no head step")


def cosine(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("bundle")
    parser.add_argument("threads", type=int)
    parser.add_argument("batches", type=int, nargs="+")
    parser.add_argument("--budget", type=float, default=3.0, help="seconds per measurement")
    parser.add_argument("--onnx", help="PREFIX of the files for OpenCV DNN (the affine as a depthwise conv)")
    parser.add_argument("--ort-onnx", help="PREFIX of the files for ONNX Runtime (the affine as --ort-affine)")
    parser.add_argument("--ort-affine", choices=("batchnorm", "depthwise", "muladd"), default="batchnorm")
    parser.add_argument("--face")
    parser.add_argument("--ref")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    start, cpu_start = time.perf_counter(), time.process_time()
    net = BundleNet(args.bundle).eval()
    load_s, load_cpu_s = time.perf_counter() - start, time.process_time() - cpu_start
    tensors = read_tensors(args.bundle)
    face = torch.from_numpy(tensors["ref.input_chw"].reshape(1, 3, 112, 112).copy())
    reference = tensors["ref.cpu_embedding"]

    results = {}
    with torch.inference_mode():
        cos = cosine(net(face)[0].numpy(), reference)
        for batch in args.batches:
            x = face.repeat(batch, 1, 1, 1)
            first = time.perf_counter()
            net(x)
            once = time.perf_counter() - first
            reps = max(2, min(50, int(args.budget / max(once, 1e-4))))
            times, cpu_times = [], []
            for _ in range(reps):
                t0, c0 = time.perf_counter(), time.process_time()
                net(x)
                times.append(time.perf_counter() - t0)
                cpu_times.append(time.process_time() - c0)
            median = statistics.median(times)
            results[str(batch)] = {"median_ms": round(median * 1e3, 2), "faces_per_s": round(batch / median, 2),
                                   "cpu_ms": round(statistics.median(cpu_times) * 1e3, 2), "reps": reps}
    # One static-shape file per batch size (OpenCV 4.6 mis-handles the dynamic batch's reshapes).
    for prefix, affine_as in ((args.onnx, "depthwise"), (args.ort_onnx, args.ort_affine)):
        if not prefix:
            continue
        net.affine_as = affine_as
        for batch in args.batches:
            torch.onnx.export(net, face.repeat(batch, 1, 1, 1), f"{prefix}.b{batch}.onnx", input_names=["face"],
                              output_names=["embedding"], opset_version=13)
    if args.onnx or args.ort_onnx:
        face.numpy().astype(np.float32).tofile(args.face)
        np.asarray(reference, np.float32).tofile(args.ref)
    print(json.dumps({"bundle": args.bundle, "backend": "pytorch", "precision": "f32", "threads": args.threads,
                      "torch": torch.__version__, "load_s": round(load_s, 3),
                      "load_cpu_s": round(load_cpu_s, 3),
                      "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                      "cosine_fp32": round(cos, 6), "batches": results}))


if __name__ == "__main__":
    main()
