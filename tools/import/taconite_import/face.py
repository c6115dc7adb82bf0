"""A real aligned face for the reference tensors: the astronaut photo Debian ships with
python3-skimage, aligned to the standard 112x112 five-point template (spec §10)."""
import numpy as np

TEMPLATE = np.array([[38.2946, 51.6963], [73.5318, 51.5014], [56.0252, 71.7366],
                     [41.5493, 92.3655], [70.7299, 92.2041]])
# Eye centres, nose tip and mouth corners of skimage.data.astronaut() (512x512), measured once
# with dlib's 68-point model (/usr/share/dlib/shape_predictor_68_face_landmarks.dat).
ASTRONAUT_LANDMARKS = np.array([[203.2, 101.5], [246.8, 104.0], [225.0, 127.0], [201.0, 140.0], [245.0, 141.0]])


def similarity(src, dst):
    """Least-squares rotation + uniform scale + translation mapping src onto dst (Umeyama), 2x3."""
    src_mean, dst_mean = src.mean(axis=0), dst.mean(axis=0)
    s, d = src - src_mean, dst - dst_mean
    u, sigma, vt = np.linalg.svd(d.T @ s / len(src))
    sign = np.diag([1.0, np.sign(np.linalg.det(u @ vt))])
    rotation = u @ sign @ vt
    scale = np.trace(np.diag(sigma) @ sign) / s.var(axis=0).sum()
    return np.hstack([scale * rotation, (dst_mean - scale * rotation @ src_mean)[:, None]])


def astronaut(variant=0):
    """Aligned 112x112 RGB uint8 face. variant 0 is the plain alignment; others perturb the
    landmarks (seeded, a few pixels) and mirror every second one: several distinct real faces."""
    import cv2
    from skimage import data
    image = data.astronaut()
    points = ASTRONAUT_LANDMARKS
    if variant:
        points = points + np.random.default_rng(variant).normal(0.0, 2.5, points.shape)
    face = cv2.warpAffine(image, similarity(points, TEMPLATE), (112, 112), flags=cv2.INTER_LINEAR,
                          borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    return face[:, ::-1].copy() if variant % 2 else face


def to_chw(rgb, channel_order):
    """((x/255)-0.5)/0.5, channel-major, planes in the network's order."""
    x = (rgb.astype(np.float32) / 255.0 - 0.5) / 0.5
    if channel_order == "BGR":
        x = x[:, :, ::-1]
    return np.ascontiguousarray(x.transpose(2, 0, 1))
