"""Opening the model file the user named. It is untrusted input: only a regular file of bounded
size is read (a FIFO would block, a device never ends), and it is opened once, so what was checked
is what is read."""
import os
import stat

from . import UnsupportedModel

# An IR-101 backbone is 261 MB; a full Lightning checkpoint adds the margin head (1.3 GB for
# WebFace12M's 617,970 classes) and SGD momentum for both (~3.1 GB in all).
MAX_CHECKPOINT_BYTES = 4 << 30
# protobuf cannot parse a message of 2 GiB or more.
MAX_ONNX_BYTES = (2 << 30) - 1

_NOT_REGULAR = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                (stat.S_ISSOCK, "a socket"))


def open_model(path, limit):
    """The file as a binary file object, after refusing anything but a regular file of at most `limit` bytes."""
    try:
        # O_NONBLOCK: opening a FIFO without a writer must not wait for one (no effect on regular files).
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise UnsupportedModel(f"{path}: no such file") from None
    except OSError as e:
        raise UnsupportedModel(f"{path}: cannot open ({e.strerror})") from None
    try:
        info = os.fstat(fd)
        mode = info.st_mode
        if stat.S_ISDIR(mode):
            raise UnsupportedModel(f"{path}: is a directory, not a model file")
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in _NOT_REGULAR if test(mode)), "not a regular file")
            raise UnsupportedModel(f"{path}: {kind}; taconite-import reads only regular files")
        if info.st_size > limit:
            raise UnsupportedModel(f"{path}: {info.st_size} bytes, more than the {limit} bytes a model file may have")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
