/* Reads the face embeddings taconiteadaface attaches, from a pad probe downstream of it.
 *
 * Build: cc read_embeddings.c $(pkg-config --cflags --libs gstreamer-1.0 gstreamer-video-1.0 gsttaconitemeta-1.0)
 * Run:   ./read_embeddings /path/to/bundle [backend]
 */
#include <gst/gst.h>
#include <gst/taconite/gsttaconitemeta.h>
#include <gst/video/video.h>

static GstPadProbeReturn print_embeddings(GstPad *pad, GstPadProbeInfo *info, gpointer user_data) {
  GstBuffer *buffer = GST_PAD_PROBE_INFO_BUFFER(info);
  gpointer state = NULL;
  GstMeta *meta;
  (void)pad;
  (void)user_data;
  /* One GstTaconiteEmbeddingMeta per face; roi_id links it to its GstVideoRegionOfInterestMeta
   * (-1: the whole buffer was the face). */
  while ((meta = gst_buffer_iterate_meta_filtered(buffer, &state, GST_TACONITE_EMBEDDING_META_API_TYPE))) {
    const GstTaconiteEmbeddingMeta *face = (const GstTaconiteEmbeddingMeta *)meta;
    GstVideoRegionOfInterestMeta *roi = face->roi_id == GST_TACONITE_WHOLE_BUFFER_ROI_ID
                                            ? NULL
                                            : gst_buffer_get_video_region_of_interest_meta_id(buffer, face->roi_id);
    g_print("pts=%" GST_TIME_FORMAT " roi=%d box=%u,%u,%ux%u model=%s backend=%s dim=%u norm=%.3f e[0..2]=%+.4f %+.4f %+.4f\n",
            GST_TIME_ARGS(GST_BUFFER_PTS(buffer)), face->roi_id, roi ? roi->x : 0, roi ? roi->y : 0, roi ? roi->w : 0,
            roi ? roi->h : 0, face->model, face->backend, face->dim, face->norm, face->embedding[0],
            face->embedding[1], face->embedding[2]);
  }
  return GST_PAD_PROBE_OK;
}

int main(int argc, char **argv) {
  gst_init(&argc, &argv);
  if (argc < 2) {
    g_printerr("usage: %s BUNDLE [BACKEND]\n", argv[0]);
    return 2;
  }
  gchar *description = g_strdup_printf(
      "videotestsrc num-buffers=3 ! video/x-raw,width=112,height=112 ! videoconvert ! "
      "taconiteadaface name=embedder bundle=\"%s\" backend=%s input-mode=crops ! fakesink",
      argv[1], argc > 2 ? argv[2] : "auto");
  GError *error = NULL;
  GstElement *pipeline = gst_parse_launch(description, &error);
  g_free(description);
  if (!pipeline) {
    g_printerr("%s\n", error->message);
    g_clear_error(&error);
    return 1;
  }
  GstElement *embedder = gst_bin_get_by_name(GST_BIN(pipeline), "embedder");
  GstPad *src = gst_element_get_static_pad(embedder, "src");
  gst_pad_add_probe(src, GST_PAD_PROBE_TYPE_BUFFER, print_embeddings, NULL, NULL);
  gst_object_unref(src);
  gst_object_unref(embedder);

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
  return status;
}
