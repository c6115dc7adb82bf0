#include "calibrate_cli.hpp"

#include <cstdio>

#include "calibration.hpp"
#include "displayed_location.hpp"
#include "gallery_index.hpp"
#include "image_list.hpp"
#include "json_write.hpp"
#include "open_set_scores.hpp"
#include "score_plot.hpp"
#include "unknown_face.hpp"

namespace taconite::gallery_cli {

namespace {

using gallery::GalleryStore;

// Where the impostor scores came from, as the report names it.
constexpr const char* kFromImages = "images";
constexpr const char* kFromUnknowns = "unknown-faces";
constexpr const char* kFromGenuine = "genuine-best-other";

struct Impostors {
  std::vector<float> scores;
  std::string source;
  std::size_t images = 0, skipped = 0;  // images read, images skipped (kFromImages)
};

Result<gallery::OpenSetScores> gallery_scores(const GalleryStore& store, std::size_t& left_out) {
  Result<gallery::GalleryInfo> info = store.info();
  if (!info) return info.error();
  Result<std::vector<gallery::TemplateRow>> templates = store.templates(true);
  if (!templates) return templates.error();
  const auto dim = static_cast<std::size_t>(info.value().embedding_dim);
  std::vector<float> rows;
  std::vector<std::int64_t> ids;
  left_out = 0;
  for (const gallery::TemplateRow& t : templates.value()) {
    // As GalleryIndex does: a template holding NaN or Inf matches nothing and is left out.
    if (t.embedding.size() != dim || !gallery::finite_query(t.embedding)) {
      ++left_out;
      continue;
    }
    rows.insert(rows.end(), t.embedding.begin(), t.embedding.end());
    ids.push_back(t.identity_id);
  }
  return gallery::OpenSetScores::build(static_cast<int>(dim), std::move(rows), std::move(ids));
}

// Every face of every photo of the directory against the gallery.
Result<Impostors> impostors_from_images(const std::string& dir, const gallery::OpenSetScores& scores,
                                        faces::ImageFaces& images, const std::function<void(const std::string&)>& warn) {
  Result<std::vector<std::filesystem::path>> files = faces::directory_images(dir);
  if (!files) return Error{files.error().kind, "--impostors " + files.error().message};
  Impostors out;
  out.source = kFromImages;
  for (const std::filesystem::path& file : files.value()) {
    ++out.images;
    gallery::Status loaded = images.load(file.string());
    if (loaded && images.faces().empty()) loaded = Error{ErrorKind::Input, file.string() + ": no face found"};
    if (!loaded) {
      warn("skipped " + loaded.error().message);
      ++out.skipped;
      continue;
    }
    for (std::size_t face = 0; face < images.faces().size(); ++face) {
      Result<faces::ImageFace> embedded = images.embed(face);
      const std::optional<float> best = embedded ? scores.best_score(embedded.value().embedding) : std::nullopt;
      if (!best) {
        warn("skipped face #" + std::to_string(face) + " of " +
             (embedded ? file.string() + ": its embedding holds NaN or Inf" : embedded.error().message));
        continue;
      }
      out.scores.push_back(*best);
    }
  }
  return out;
}

Result<Impostors> impostors_from_unknowns(const GalleryStore& store, const gallery::OpenSetScores& scores) {
  Impostors out;
  out.source = kFromUnknowns;
  Result<std::size_t> count = store.unknown_face_count();
  if (!count) return count.error();
  if (count.value() > gallery::kMaxUnknownFaces)
    return Error{ErrorKind::Input, "the gallery keeps " + std::to_string(count.value()) +
                                       " unknown faces, more than the " + std::to_string(gallery::kMaxUnknownFaces) +
                                       " calibrate reads; give photos with --impostors or forget old ones"};
  if (count.value() == 0) return out;
  Result<std::vector<gallery::UnknownFaceRow>> faces = store.unknown_faces(true, false);
  if (!faces) return faces.error();
  for (const gallery::UnknownFaceRow& f : faces.value())
    if (const std::optional<float> best = scores.best_score(f.embedding)) out.scores.push_back(*best);
  return out;
}

std::string report_json(const gallery::Calibration& c, const CalibrateOptions& o, const Impostors& impostors,
                        const gallery::LeaveOneOut& genuine, std::size_t left_out) {
  JsonBuilder* b = json_builder_new();
  json_builder_begin_object(b);
  auto number = [&](const char* name, double v) {
    json_builder_set_member_name(b, name);
    json_builder_add_double_value(b, v);
  };
  auto count = [&](const char* name, std::size_t v) {
    json_builder_set_member_name(b, name);
    json_builder_add_int_value(b, static_cast<gint64>(v));
  };
  number("threshold", c.threshold);
  number("fpir", c.fpir);
  number("target_fpir", o.target_fpir);
  number("tpir", c.tpir);
  count("genuine_probes", c.counts.genuine);
  count("named_right", c.counts.named_right);
  count("named_wrong", c.counts.named_wrong);
  count("unnamed", c.counts.unnamed);
  count("impostors", c.counts.impostors);
  count("impostors_named", c.counts.impostors_named);
  json_builder_set_member_name(b, "impostor_source");
  json_builder_add_string_value(b, impostors.source.c_str());
  count("impostor_images", impostors.images);
  count("impostor_images_skipped", impostors.skipped);
  count("eligible_templates", genuine.eligible);
  count("templates_left_out", left_out);
  json_builder_end_object(b);
  JsonNode* root = json_builder_get_root(b);
  std::string text = json::write_json(root);
  json_node_unref(root);
  g_object_unref(b);
  return text;
}

void report_text(const gallery::Calibration& c, const CalibrateOptions& o, const Impostors& impostors,
                 const gallery::LeaveOneOut& genuine) {
  const gallery::CalibrationCounts& n = c.counts;
  std::printf("threshold %.4f\n", c.threshold);
  std::printf("fpir %.4f (target %g)\n", c.fpir, o.target_fpir);
  std::printf("tpir %.4f\n", c.tpir);
  std::printf("genuine probes %zu (leave-one-out%s)\n", n.genuine,
              genuine.eligible > n.genuine
                  ? (", an even sample of " + std::to_string(genuine.eligible) + " templates").c_str()
                  : "");
  std::printf("named right %zu\nnamed wrong %zu\nunnamed %zu\n", n.named_right, n.named_wrong, n.unnamed);
  const std::string from = impostors.source == kFromImages
                               ? "faces in " + std::to_string(impostors.images - impostors.skipped) + " of " +
                                     std::to_string(impostors.images) + " photos of " + o.impostors
                               : impostors.source == kFromUnknowns ? std::string("the gallery's unknown faces")
                                                                  : std::string("the genuine probes' best other identity");
  std::printf("impostors %zu (%s)\nimpostors named %zu\n", n.impostors, from.c_str(), n.impostors_named);
}

}  // namespace

gallery::Status calibrate(const CalibrateOptions& o, const GalleryStore& store, faces::ImageFaces* images,
                          const std::function<void(const std::string&)>& warn) {
  std::size_t left_out = 0;
  Result<gallery::OpenSetScores> scores = gallery_scores(store, left_out);
  if (!scores) return scores.error();
  if (left_out) warn("left out " + std::to_string(left_out) + " template(s) holding NaN or Inf");
  const gallery::LeaveOneOut genuine = scores.value().leave_one_out();
  Result<Impostors> impostors = !o.impostors.empty() && images
                                    ? impostors_from_images(o.impostors, scores.value(), *images, warn)
                                    : impostors_from_unknowns(store, scores.value());
  if (!impostors) return impostors.error();
  if (impostors.value().scores.empty()) {
    if (!o.impostors.empty())
      return Error{ErrorKind::Input, "--impostors " + o.impostors + ": no face found in any of its images"};
    // Without impostors the nearest other identity of each genuine probe stands in for one.
    warn("no impostors (no --impostors and no unknown faces kept): the genuine probes' best other identity "
         "stands in for impostors");
    impostors.value().source = kFromGenuine;
    for (const gallery::GenuineProbe& p : genuine.probes)
      if (p.wrong_best) impostors.value().scores.push_back(*p.wrong_best);
  }
  if (genuine.probes.empty() && impostors.value().scores.empty())
    return Error{ErrorKind::Input, gallery::displayed_location(o.gallery) +
                                       ": nothing to calibrate on (no identity has 2 or more templates, no impostors)"};
  Result<gallery::Calibration> c = gallery::calibrate_threshold(genuine.probes, impostors.value().scores, o.target_fpir);
  if (!c) return c.error();
  if (!o.plot.empty()) {
    std::vector<double> genuine_scores;
    for (const gallery::GenuineProbe& p : genuine.probes) genuine_scores.push_back(p.true_best);
    const std::vector<double> impostor_scores(impostors.value().scores.begin(), impostors.value().scores.end());
    const plot::ScorePlot scores_plot{"cosine similarity of the best identity", "probes",
                                      {{"", genuine_scores, impostor_scores, c.value().threshold}}};
    if (gallery::Status s = plot::write_score_plot(o.plot, scores_plot); !s)
      return Error{s.error().kind, "--plot " + s.error().message};
  }
  if (o.json)
    std::printf("%s\n", report_json(c.value(), o, impostors.value(), genuine, left_out).c_str());
  else
    report_text(c.value(), o, impostors.value(), genuine);
  return gallery::Ok{};
}

}  // namespace taconite::gallery_cli
