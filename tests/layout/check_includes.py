#!/usr/bin/env python3
"""The include rules of docs/architecture.md, checked on the source tree:

1. vision/ (the face front end) includes no GStreamer or GLib header: no <gst/...>, <glib...>,
   <gio/...>, <gobject/...>, <json-glib/...>, and no header that lives only under gst/; nor one that
   lives only under gallery/ (vision/ builds without the gallery library and its SQLite, libpq, FAISS).
2. tools/, bench/ and app/ (taconite-run) include no gst/ internals: no header that lives only under gst/ (the public
   metadata library gst/meta is no internal), not even an element's registration header: they load the
   plugin and make its elements by name, as an application does.
3. gst/ by element: a file of one element's folder (gst/adaface/, gst/track/, ...) includes no
   header of another element's folder, and gst/common/ none of any element's: what two elements
   share lives in gst/common/ (or vision/).

Prints each offending include as file:line and exits 1; exits 0 when there is none.
Usage: check_includes.py SOURCE_ROOT
"""
import os
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
GLIB_OR_GST = re.compile(r'^(gst/|glib[-/.]|glib$|gio/|gobject/|json-glib/)')
SOURCE_SUFFIXES = {'.c', '.cc', '.cpp', '.h', '.hpp'}
# Includes allowed to break rule 2, with the reason: (including file, included header).
# What app/ shares with the elements, until it moves into a library of its own: the snapshot writer reads
# frames (any raw format the chain carries) with gst/common's mapping and view, and uses its job thread.
KNOWN = {
    ('app/snapshots/kept_frames.cpp', 'frame_view.hpp'),
    ('app/snapshots/kept_frames.cpp', 'readable_frame.hpp'),
    ('app/snapshots/snapshot_writer.cpp', 'job_thread.hpp'),
    # Home Assistant speaks through taconitepublish's MQTT client (one libmosquitto client to keep), and
    # credentials files are read with the elements' owner-only check.
    ('app/mqtt/home_assistant.hpp', 'mqtt_publisher.hpp'),
    ('app/mqtt/home_assistant.cpp', 'credentials_file.hpp'),
    ('app/web/web_server.cpp', 'credentials_file.hpp'),
}
# gst/ folders that are no element: the shared code, the public metadata library, the registration.
NOT_ELEMENTS = {'common', 'meta', 'plugin', 'examples'}


def sources(root, folder):
    return sorted(p for p in (root / folder).rglob('*') if p.suffix in SOURCE_SUFFIXES and p.is_file())


def includes(path):
    for number, line in enumerate(path.read_text(encoding='utf-8', errors='replace').splitlines(), 1):
        match = INCLUDE.match(line)
        if match:
            yield number, match.group(1), match.group(2)


def main():
    root = pathlib.Path(sys.argv[1]).resolve()
    headers = []
    for folder, subfolders, files in os.walk(root):
        # Not the build trees (generated headers) or hidden folders (.git).
        subfolders[:] = [d for d in subfolders if not d.startswith(('.', 'build'))]
        relative = pathlib.Path(folder).relative_to(root)
        headers += [(relative / f).as_posix() for f in files if f.endswith(('.h', '.hpp'))]

    def only_under(folder, included, including, outside=None):
        """Whether `included` (a quoted include of `including`) can only be a header under `folder`/
        (and not under `outside`/)."""
        if (including.parent / included).is_file():
            return False  # found next to the including file, as the compiler looks first
        matches = [h for h in headers if h == included or h.endswith('/' + included)]
        return bool(matches) and all(h.startswith(folder + '/') and not (outside and h.startswith(outside + '/'))
                                     for h in matches)

    def gst_only(included, including):
        # gst/meta is the public metadata library applications link to, not an internal.
        return only_under('gst', included, including, outside='gst/meta')

    problems = []
    used = set()
    for path in sources(root, 'vision'):
        for number, kind, included in includes(path):
            if GLIB_OR_GST.match(included) or (kind == '"' and gst_only(included, path)):
                shown = f'<{included}>' if kind == '<' else f'"{included}"'
                problems.append(f'{path.relative_to(root)}:{number}: vision/ includes {shown}: '
                                'vision/ must not depend on GStreamer or GLib')
            elif kind == '"' and only_under('gallery', included, path):
                problems.append(f'{path.relative_to(root)}:{number}: vision/ includes "{included}" of gallery/: '
                                'vision/ must build without the gallery library (give it its own type)')
    for folder in ('tools', 'bench', 'app'):
        for path in sources(root, folder):
            name = path.relative_to(root).as_posix()
            for number, kind, included in includes(path):
                if kind != '"' or not gst_only(included, path):
                    continue
                if (name, included) in KNOWN:
                    used.add((name, included))
                    continue
                problems.append(f'{name}:{number}: {folder}/ includes "{included}", a gst/ internal: '
                                'use vision/, gst/meta or the plugin\'s elements by name')
    element_folders = sorted(p.name for p in (root / 'gst').iterdir() if p.is_dir() and p.name not in NOT_ELEMENTS)
    for folder in element_folders + ['common']:
        for path in sources(root, f'gst/{folder}'):
            for number, kind, included in includes(path):
                if kind != '"' or (path.parent / included).is_file():
                    continue
                owners = {h.split('/')[1] for h in headers
                          if (h == included or h.endswith('/' + included)) and h.startswith('gst/')}
                foreign = owners & set(element_folders) - {folder}
                if foreign and not owners - foreign:
                    problems.append(f'{path.relative_to(root)}:{number}: gst/{folder}/ includes "{included}" of '
                                    f'gst/{"/, gst/".join(sorted(foreign))}/: move what elements share to gst/common/')
    for name, included in sorted(KNOWN - used):
        problems.append(f'{name}: no longer includes "{included}" from gst/: remove it from KNOWN in {__file__}')
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
