/* Who was seen: a pad probe after taconiteidentify prints one line each time a track's identity
 * changes (first seen pending, then decided known or unknown): stream, time, track, label,
 * confidence and label state. Only the installed API: gsttaconitemeta-1.0's typed ROI reads.
 *
 * Build: cc who_was_seen.c $(pkg-config --cflags --libs gstreamer-1.0 gsttaconitemeta-1.0)
 * Run:   ./who_was_seen VIDEO BUNDLE GALLERY         (the stock chain on a video file)
 *        ./who_was_seen --launch "LAUNCH LINE"       (any pipeline holding a taconiteidentify)
 */
#include <gst/gst.h>
#include <gst/taconite/gsttaconiteroi.h>
#include <gst/video/video.h>

#include <string.h>

typedef struct {
  gchar *stream;      /* taconiteidentify's stream name */
  GHashTable *shown;  /* track id -> "state label" last printed */
} WhoWasSeen;

static GstPadProbeReturn print_changes(GstPad *pad, GstPadProbeInfo *info, gpointer user_data) {
  WhoWasSeen *seen = user_data;
  GstBuffer *buffer = GST_PAD_PROBE_INFO_BUFFER(info);
  GList *rois = gst_buffer_get_taconite_rois(buffer);
  (void)pad;
  for (GList *l = rois; l; l = l->next) {
    const GstVideoRegionOfInterestMeta *roi = l->data;
    gint64 track = 0;
    GstTaconiteLabelState state = gst_taconite_roi_get_label_state(roi);
    if (!gst_taconite_roi_get_track_id(roi, &track) || state == GST_TACONITE_LABEL_STATE_NONE) continue;
    const gchar *label = gst_taconite_roi_get_label(roi);
    gchar *now = g_strdup_printf("%s %s", gst_taconite_label_state_to_string(state), label ? label : "");
    const gchar *before = g_hash_table_lookup(seen->shown, &track);
    if (before && strcmp(before, now) == 0) {
      g_free(now);
      continue;
    }
    gdouble confidence = 0.0;
    gboolean decided = gst_taconite_roi_get_confidence(roi, &confidence);
    g_print("stream=%s time=%" GST_TIME_FORMAT " track=%" G_GINT64_FORMAT " label=%s confidence=%.3f label_state=%s\n",
            seen->stream, GST_TIME_ARGS(GST_BUFFER_PTS(buffer)), track, label ? label : "-",
            decided ? confidence : 0.0, gst_taconite_label_state_to_string(state));
    g_hash_table_insert(seen->shown, g_memdup2(&track, sizeof track), now);
  }
  g_list_free(rois);
  return GST_PAD_PROBE_OK;
}

/* The pipeline's first taconiteidentify (the caller owns the reference), or NULL. */
static GstElement *find_identify(GstElement *pipeline) {
  GstIterator *it = gst_bin_iterate_recurse(GST_BIN(pipeline));
  GValue item = G_VALUE_INIT;
  GstElement *found = NULL;
  while (!found && gst_iterator_next(it, &item) == GST_ITERATOR_OK) {
    GstElement *element = g_value_get_object(&item);
    GstElementFactory *factory = gst_element_get_factory(element);
    if (factory && strcmp(GST_OBJECT_NAME(factory), "taconiteidentify") == 0) found = gst_object_ref(element);
    g_value_reset(&item);
  }
  g_value_unset(&item);
  gst_iterator_free(it);
  return found;
}

int main(int argc, char **argv) {
  gst_init(&argc, &argv);
  gchar *description = NULL;
  if (argc == 3 && strcmp(argv[1], "--launch") == 0) {
    description = g_strdup(argv[2]);
  } else if (argc == 4) {
    gchar *video = gst_filename_to_uri(argv[1], NULL);
    description = g_strdup_printf(
        "uridecodebin uri=\"%s\" ! videoconvert ! facedetect display=false ! taconitelandmarks ! taconitetrack ! "
        "taconiteadaface bundle=\"%s\" ! taconiteidentify gallery=\"%s\" ! fakesink",
        video ? video : argv[1], argv[2], argv[3]);
    g_free(video);
  } else {
    g_printerr("usage: %s VIDEO BUNDLE GALLERY\n       %s --launch \"LAUNCH LINE WITH taconiteidentify\"\n", argv[0],
               argv[0]);
    return 2;
  }
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch(description, &error);
  g_free(description);
  if (!pipeline || error) {
    g_printerr("%s\n", error ? error->message : "could not make the pipeline");
    g_clear_error(&error);
    if (pipeline) gst_object_unref(pipeline);
    return 1;
  }
  GstElement *identify = find_identify(pipeline);
  if (!identify) {
    g_printerr("the pipeline holds no taconiteidentify\n");
    gst_object_unref(pipeline);
    return 1;
  }
  WhoWasSeen seen = {NULL, g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free)};
  g_object_get(identify, "stream", &seen.stream, NULL);
  if (!seen.stream || !*seen.stream) { /* empty: the element's name, as taconiteidentify does */
    g_free(seen.stream);
    seen.stream = gst_element_get_name(identify);
  }
  GstPad *src = gst_element_get_static_pad(identify, "src");
  gst_pad_add_probe(src, GST_PAD_PROBE_TYPE_BUFFER, print_changes, &seen, NULL);
  gst_object_unref(src);
  gst_object_unref(identify);

  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  GstBus *bus = gst_element_get_bus(pipeline);
  GstMessage *msg = gst_bus_timed_pop_filtered(bus, GST_CLOCK_TIME_NONE, GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  int status = 0;
  if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR) {
    gchar *debug = NULL;
    gst_message_parse_error(msg, &error, &debug);
    g_printerr("error: %s\n%s\n", error->message, debug ? debug : "");
    g_clear_error(&error);
    g_free(debug);
    status = 1;
  }
  gst_message_unref(msg);
  gst_object_unref(bus);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(pipeline);
  g_hash_table_destroy(seen.shown);
  g_free(seen.stream);
  return status;
}
