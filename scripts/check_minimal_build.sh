#!/usr/bin/env bash
# The build without any optional external dependency (MQTT, PostgreSQL, FAISS, dlib; docs/install.md):
# configures build-min (or BUILD_DIR) with all four disabled, builds it, checks that the plugin
# registers only the elements that need none of them, that taconitepublish's method=mqtt refuses
# saying why, that taconite-gallery works on an SQLite gallery (exact search only, a PostgreSQL
# location refused saying why) and taconiteidentify loads it warning once about the missing HNSW,
# and runs the suites that are built there.
#   scripts/check_minimal_build.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build-min}"
if [ ! -d "$build" ]; then
  meson setup "$build" -Dwerror=true -Dbuildtype=debugoptimized \
    -Dmqtt=disabled -Dpostgresql=disabled -Dfaiss=disabled -Ddlib=disabled
fi
nice -n 5 ninja -C "$build" -j2

plugin="$build/gst/plugin/libgsttaconite.so"
export GST_REGISTRY_1_0="$PWD/$build/registry-minimal.bin"
features="$(gst-inspect-1.0 "$plugin" | sed -n 's/^ *\(taconite[a-z]*\): .*/\1/p' | sort | tr '\n' ' ')"
expected="taconiteadaface taconitedetect taconiteidentify taconiteoverlay taconitepublish "
if [ "$features" != "$expected" ]; then
  echo "check_minimal_build: the plugin registers '$features', expected '$expected'" >&2
  exit 1
fi
if out="$(GST_PLUGIN_PATH_1_0="$build/gst/plugin" gst-launch-1.0 -q fakesrc num-buffers=1 ! \
    taconitepublish method=mqtt ! fakesink 2>&1)"; then
  echo "check_minimal_build: method=mqtt started in a build without MQTT" >&2
  exit 1
fi
if ! grep -q "built without MQTT support" <<< "$out"; then
  echo "check_minimal_build: method=mqtt failed without saying why: $out" >&2
  exit 1
fi
echo "plugin: $features; method=mqtt refuses: built without MQTT support"

fail() { echo "check_minimal_build: $*" >&2; exit 1; }
cli="$build/tools/gallery/taconite-gallery"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
# An SQLite gallery of two identities, imported from JSON lines (no model needed).
fingerprint="$(printf '%064d' 0)"
{
  echo '{"taconite_gallery":1,"embedding_dim":4,"model":"m","model_fingerprint":"'"$fingerprint"'"}'
  echo '{"name":"alice","metadata":{},"embedding":[1,0,0,0],"norm":1,"source":"a","created_unix":1}'
  echo '{"name":"bob","metadata":{},"embedding":[0,1,0,0],"norm":1,"source":"b","created_unix":1}'
} > "$scratch/people.jsonl"
"$cli" import "$scratch/people.db" "$scratch/people.jsonl" > /dev/null || fail "taconite-gallery import failed"
listed="$("$cli" list "$scratch/people.db")"
grep -q alice <<< "$listed" && grep -q bob <<< "$listed" || fail "taconite-gallery list: $listed"
stats="$("$cli" stats "$scratch/people.db" --approximate-above 1)"
grep -q "search exact (above --approximate-above, but this taconite was built without FAISS" <<< "$stats" ||
  fail "taconite-gallery stats does not say the search is exact: $stats"
if out="$("$cli" list "postgresql:///people?host=/nonexistent" 2>&1)"; then
  fail "a PostgreSQL gallery was listed in a build without libpq"
fi
grep -q "built without PostgreSQL support" <<< "$out" || fail "a PostgreSQL location failed without saying why: $out"
echo "taconite-gallery: SQLite import, list, stats (exact only); PostgreSQL refused: built without PostgreSQL support"
# taconiteidentify on it, above approximate-above: it starts, searching exactly, and warns once.
out="$(GST_PLUGIN_PATH_1_0="$build/gst/plugin" gst-launch-1.0 videotestsrc num-buffers=1 ! \
    taconiteidentify gallery="$scratch/people.db" approximate-above=1 ! fakesink 2>&1)" ||
  fail "taconiteidentify did not run on an SQLite gallery: $out"
[ "$(grep -c "built without FAISS: searching exactly" <<< "$out")" = 1 ] ||
  fail "taconiteidentify did not warn once about exact search: $out"
echo "taconiteidentify: loads the SQLite gallery, one warning: built without FAISS: searching exactly"
OMP_WAIT_POLICY=passive meson test -C "$build" --print-errorlogs --num-processes 2 \
  --suite unit --suite json --suite vision --suite layout --suite docs --suite gallery
