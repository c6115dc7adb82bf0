"""The face contract's setters and getters (gsttaconiteface.h, gsttaconiteroi.h) called from Python
through the GstTaconite typelib: every setter round-trips through its getter, and bad input is a
False return that changes nothing. Shared by gst-python-installed and gst-python-build-tree."""


def check_face_contract(Gst, GstVideo, GstTaconite):
    """Returns a list of failures (empty: all held)."""
    failures = []

    def expect(what, got, wanted):
        if got != wanted:
            failures.append(f"{what}: got {got!r}, expected {wanted!r}")

    buffer = Gst.Buffer.new_allocate(None, 64, None)
    roi = GstVideo.buffer_add_video_region_of_interest_meta(buffer, "face", 10, 20, 40, 50)
    expect("roi_get_box", GstTaconite.roi_get_box(roi), (True, 10, 20, 40, 50))

    expect("roi_set_detection", GstTaconite.roi_set_detection(roi, 0.875), True)
    expect("roi_set_fresh", GstTaconite.roi_set_fresh(roi, False), True)
    expect("roi_get_detection_confidence", GstTaconite.roi_get_detection_confidence(roi), (True, 0.875))
    expect("roi_get_fresh", GstTaconite.roi_get_fresh(roi), (True, False))
    expect("roi_is_predicted (carried)", GstTaconite.roi_is_predicted(roi), True)
    expect("roi_set_predicted", GstTaconite.roi_set_predicted(roi, True), True)
    expect("roi_get_predicted", GstTaconite.roi_get_predicted(roi), (True, True))
    expect("roi_set_detection(NaN)", GstTaconite.roi_set_detection(roi, float("nan")), False)

    expect("roi_get_track_state (untracked)", GstTaconite.roi_get_track_state(roi), GstTaconite.TrackState.NONE)
    expect("roi_set_track_id", GstTaconite.roi_set_track_id(roi, 1 << 40, "a-uid"), True)
    expect("roi_get_track_id", GstTaconite.roi_get_track_id(roi), (True, 1 << 40))
    expect("roi_get_track_id_from", GstTaconite.roi_get_track_id_from(roi, "object_id"), (True, 1 << 40))
    expect("roi_get_track_uid", GstTaconite.roi_get_track_uid(roi), "a-uid")
    expect("roi_get_track_state", GstTaconite.roi_get_track_state(roi), GstTaconite.TrackState.PREDICTED)
    expect("TrackState.to_string", GstTaconite.TrackState.to_string(GstTaconite.TrackState.TRACKED), "tracked")
    expect("roi_set_track_id(empty uid)", GstTaconite.roi_set_track_id(roi, 3, ""), False)
    expect("roi_get_track_id after a refusal", GstTaconite.roi_get_track_id(roi), (True, 1 << 40))

    expect("roi_set_landmarks", GstTaconite.roi_set_landmarks(roi, [11.0, 12.0, 13.0], [21.0, 22.0, 23.0]), True)
    ok, x, y = GstTaconite.roi_get_landmarks(roi)
    expect("roi_get_landmarks", (ok, list(x), list(y)), (True, [11.0, 12.0, 13.0], [21.0, 22.0, 23.0]))
    expect("roi_set_landmarks(NaN)", GstTaconite.roi_set_landmarks(roi, [float("nan")], [1.0]), False)

    expect("roi_set_quality", GstTaconite.roi_set_quality(roi, ["score", "embedding-score"], [0.5, 0.75]), True)
    expect("roi_get_quality", GstTaconite.roi_get_quality(roi), (True, 0.75))
    expect("roi_get_quality_field", GstTaconite.roi_get_quality_field(roi, "score"), (True, 0.5))
    expect("roi_set_quality(unknown field)", GstTaconite.roi_set_quality(roi, ["beauty"], [1.0]), False)

    expect("roi_set_identity_pending", GstTaconite.roi_set_identity_pending(roi), True)
    expect("roi_get_label_state (pending)", GstTaconite.roi_get_label_state(roi), GstTaconite.LabelState.PENDING)
    expect("roi_set_identity", GstTaconite.roi_set_identity(roi, "Zoë", 4, 0.625), True)
    expect("identity read back", (GstTaconite.roi_get_label(roi), GstTaconite.roi_get_label_id(roi),
                                  GstTaconite.roi_get_confidence(roi), GstTaconite.roi_get_label_state(roi)),
           ("Zoë", (True, 4), (True, 0.625), GstTaconite.LabelState.KNOWN))
    expect("roi_set_identity(label_id 0)", GstTaconite.roi_set_identity(roi, "eve", 0, 0.5), False)

    custom = Gst.Structure.new_from_string("taconite-identity, votes=(uint)2")
    expect("roi_replace_param", GstTaconite.roi_replace_param(roi, custom), True)
    expect("roi_has_param", GstTaconite.roi_has_param(roi, "taconite-identity"), True)
    expect("roi_remove_param", GstTaconite.roi_remove_param(roi, "taconite-identity"), True)
    expect("roi_remove_param (again)", GstTaconite.roi_remove_param(roi, "taconite-identity"), False)
    expect("points_params_new", GstTaconite.points_params_new("landmarks-68", [1.0], [2.0]).get_name(),
           "landmarks-68")

    # A ROI no one wrote: the absent answers.
    bare = GstVideo.buffer_add_video_region_of_interest_meta(buffer, "face", 0, 0, 0, 0)
    expect("bare roi_get_box", GstTaconite.roi_get_box(bare)[0], False)
    expect("bare roi_get_landmarks", GstTaconite.roi_get_landmarks(bare)[0], False)
    expect("bare roi_get_quality", GstTaconite.roi_get_quality(bare)[0], False)
    expect("bare roi_get_track_uid", GstTaconite.roi_get_track_uid(bare), None)
    return failures
