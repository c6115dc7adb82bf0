#!/bin/sh
# Builds gst/examples/who_was_seen.c against an installed prefix only (meson install into a scratch
# DESTDIR, the compiler fed by the installed gsttaconitemeta-1.0.pc) and runs it on the astronaut photo
# as a short video with a gallery the installed taconite-gallery enrolls: the astronaut's track must
# be printed known as "astronaut" (decided on its first embedding, never pending), on the stream
# named by taconiteidentify.
#   who_was_seen_test.sh BUILD_DIR PREFIX LIBDIR CC EXAMPLE_SOURCE BUNDLE ASTRONAUT_PNG
set -eu
build=$1 prefix=$2 libdir=$3 cc=$4 source=$5 bundle=$6 astronaut=$7
[ -f "$astronaut" ] || { echo "no astronaut photo (python3-skimage): skipped"; exit 77; }
gst-inspect-1.0 facedetect >/dev/null 2>&1 || { echo "no facedetect (gstreamer1.0-opencv): skipped"; exit 77; }
dest="$build/tests/gst/who-was-seen-destdir"
rm -rf "$dest"
meson install -C "$build" --no-rebuild --quiet --destdir "$dest" >/dev/null
case "$libdir" in /*) lib="$dest$libdir" ;; *) lib="$dest$prefix/$libdir" ;; esac
# The installed .pc with its prefix moved into DESTDIR (as if installed there); its Requires resolve as usual.
mkdir -p "$dest/pkgconfig"
pc=gsttaconitemeta-1.0.pc
sed "s|^prefix=.*|prefix=$dest$prefix|" "$lib/pkgconfig/$pc" >"$dest/pkgconfig/$pc"
flags=$(PKG_CONFIG_PATH="$dest/pkgconfig" pkg-config --cflags --libs gstreamer-1.0 gsttaconitemeta-1.0)
case "$flags" in *"$dest"*) ;; *) echo "FAIL: pkg-config did not point into $dest: $flags"; exit 1 ;; esac
# shellcheck disable=SC2086
"$cc" -std=c11 -Wall -Wextra -Werror "$source" $flags -o "$dest/who_was_seen"
export LD_LIBRARY_PATH="$lib" GST_PLUGIN_PATH="$lib/gstreamer-1.0" GST_REGISTRY_1_0="$dest/registry.bin"
gallery="$dest/people.db"
"$dest$prefix/bin/taconite-gallery" create "$gallery" --bundle "$bundle" >/dev/null
"$dest$prefix/bin/taconite-gallery" enroll "$gallery" --bundle "$bundle" --name astronaut "$astronaut" >/dev/null
out="$dest/who_was_seen.txt"
"$dest/who_was_seen" --launch "filesrc location=\"$astronaut\" ! decodebin ! videoconvert ! \
imagefreeze num-buffers=12 ! video/x-raw,framerate=10/1 ! videoscale ! video/x-raw,width=480,height=480 ! videoconvert ! facedetect display=false ! \
taconitelandmarks ! taconitetrack ! taconiteadaface bundle=\"$bundle\" backend=cpu-reference reinfer-interval=1 ! \
taconiteidentify gallery=\"$gallery\" stream=door1 ! fakesink" >"$out"
cat "$out"
grep -q '^stream=door1 time=.* label=astronaut confidence=0\.[0-9]* label_state=known$' "$out" ||
  { echo "FAIL: the astronaut was not printed known"; exit 1; }
# Her track is embedded on its first frame, and its first embedding decides it (issue 30).
! grep -q 'label_state=pending' "$out" || { echo "FAIL: a track was printed pending after its first embedding"; exit 1; }
echo "ok: who_was_seen built against $dest and printed the astronaut known"
