#include "bundle/bundle.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <system_error>

#include "bundle/regular_file.hpp"
#include "bundle/text_lines.hpp"
#include "common/failure.hpp"

namespace taconite::bundle {

namespace fs = std::filesystem;

Bundle Bundle::open(const fs::path& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) fail(ErrorKind::Io, dir.string() + ": cannot open the bundle directory: " + file_problem(dir, errno));
  if (!S_ISDIR(st.st_mode))
    fail(ErrorKind::Io, dir.string() + ": not a directory (a bundle is a directory holding " +
                            std::string(kManifestFile) + ")");
  std::error_code ec;
  if (struct stat manifest {}; ::lstat((dir / kManifestFile).c_str(), &manifest) != 0 && errno == ENOENT) {
    if (fs::exists(dir / "plan.txt", ec))
      fail(ErrorKind::Bundle, dir.string() +
                                  ": old-format bundle (plan.txt, no manifest.txt); re-export it with "
                                  "export_ir18.py / export_ir101.py");
    fail(ErrorKind::Io, (dir / kManifestFile).string() + ": does not exist; not a bundle directory");
  }

  Bundle bundle;
  bundle.dir_ = fs::canonical(dir, ec);
  if (ec) fail(ErrorKind::Io, dir.string() + ": " + ec.message());
  bundle.manifest_ = parse_manifest(read_text_file(bundle.dir_ / kManifestFile));
  // Every file a record names must stay inside the bundle (spec §2), used by a conv or not.
  for (const auto& [key, xclbin] : bundle.manifest_.xclbins)
    bundle.resolve_inside(xclbin.file, xclbin.line, xclbin.text, /*must_exist=*/false);
  bundle.tensors_ = TensorStore::open(bundle.dir_);
  return bundle;
}

fs::path Bundle::resolve_inside(std::string_view relative, int line, std::string_view line_text,
                                bool must_exist) const {
  auto bad = [&](const std::string& problem) {
    fail(ErrorKind::Bundle, located_message(kManifestFile, line, line_text, problem));
  };
  const fs::path rel(relative);
  if (relative.empty()) bad("empty file name");
  if (rel.is_absolute()) bad("file '" + std::string(relative) + "' must be relative to the bundle");
  // A '..' that stays inside (kernels/../kernels/x) is fine; one that climbs out is not.
  const fs::path normal = rel.lexically_normal();
  if (!normal.empty() && *normal.begin() == "..") bad("file '" + std::string(relative) + "' escapes the bundle ('..')");

  std::error_code ec;
  const fs::path resolved = fs::weakly_canonical(dir_ / rel, ec);
  if (ec) bad("cannot resolve file '" + std::string(relative) + "': " + ec.message());
  // Compare whole path components so /a/bundle2 is not "inside" /a/bundle.
  auto [dir_end, res_it] = std::mismatch(dir_.begin(), dir_.end(), resolved.begin(), resolved.end());
  if (dir_end != dir_.end()) bad("file '" + std::string(relative) + "' resolves outside the bundle (symlink?)");
  if (must_exist)
    if (const std::string problem = regular_file_problem(resolved); !problem.empty())
      bad("file '" + std::string(relative) + "' " + problem);
  return resolved;
}

}  // namespace taconite::bundle
