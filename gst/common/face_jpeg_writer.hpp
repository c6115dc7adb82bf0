// The writer thread behind both elements' best faces: the streaming thread only moves a face (what
// its sink needs, and the aligned RGB crop) into a bounded queue (job_thread.hpp); the thread
// encodes the crop as JPEG and hands it to the sink, taconitepublish's files (with retention) or
// base64, or taconiteidentify's gallery. A face arriving at a full queue is dropped, as is one the
// sink cannot store, and one still queued at stop; all are counted. A failing sink is reported
// once (a warning) until a face is stored again (an info then, with the count dropped meanwhile),
// never once per face.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <opencv2/core.hpp>
#include <string>
#include <utility>
#include <vector>

#include "job_thread.hpp"

namespace taconite::gst {

// The RGB crop as a JPEG of `quality` (0..100); empty when it is empty or does not encode.
std::vector<unsigned char> encode_rgb_jpeg(const cv::Mat& rgb, int quality);

// What an element shows of its writer (read-only counters); shared so it stays readable after stop.
struct FaceWriterCounters {
  std::atomic<std::uint64_t> stored{0};   // handed to the sink, which stored it
  std::atomic<std::uint64_t> dropped{0};  // queue full, refused, not stored, or still queued at stop
};

// Where the faces go, called on the writer thread only. `Payload`: what a face carries besides its
// picture.
template <typename Payload>
class FaceSink {
 public:
  virtual ~FaceSink() = default;
  // Stores a face with its JPEG (empty: the crop was empty or did not encode); "" when stored, else
  // why not. It may throw: the writer turns the exception into a problem (exception_problem()).
  virtual std::string store(Payload& face, std::vector<unsigned char> jpeg) = 0;
  // The problem for an exception `what` thrown while a face was encoded or stored.
  virtual std::string exception_problem(const std::string& what) const = 0;
  // The warning when faces start being dropped for `problem`; the info when one is stored again.
  virtual std::string failing_message(const std::string& problem) const = 0;
  virtual std::string recovered_message(std::uint64_t dropped_meanwhile) const = 0;
  // A face could not be stored (e.g. forget a connection, so the next face opens it again).
  virtual void failed() noexcept {}
};

template <typename Payload>
class FaceJpegWriter {
 public:
  // `report(warning, message)` is called on the writer's thread (it must not throw; it is caught).
  using Report = std::function<void(bool warning, const std::string& message)>;

  // `sink` must outlive the writer (its owner declares the writer after what the sink uses).
  FaceJpegWriter(FaceSink<Payload>& sink, std::size_t max_queued, int jpeg_quality,
                 std::shared_ptr<FaceWriterCounters> counters, Report report)
      : sink_(sink),
        jpeg_quality_(jpeg_quality),
        counters_(std::move(counters)),
        report_(std::move(report)),
        jobs_(max_queued, [this](Job& job) { run(job); }) {}
  ~FaceJpegWriter() { counters_->dropped += jobs_.stop(); }  // the queued faces are dropped (counted)
  FaceJpegWriter(const FaceJpegWriter&) = delete;
  FaceJpegWriter& operator=(const FaceJpegWriter&) = delete;

  // Queues a face and its RGB crop (the caller's; empty: no picture); false (counted dropped) when
  // the queue is full. Never waits for the thread's work.
  bool submit(Payload face, cv::Mat rgb) {
    if (jobs_.submit(Job{std::move(face), std::move(rgb)})) return true;
    ++counters_->dropped;
    return false;
  }
  // Whether a submit() now would be refused: the caller skips preparing the crop and counts it
  // dropped (refused()). Only the thread that submits fills the queue, so the answer holds for it.
  bool full() const { return jobs_.full(); }
  void refused() { ++counters_->dropped; }
  // Waits up to `timeout_ms` until every queued face is stored or dropped.
  void drain(unsigned timeout_ms) { jobs_.drain(timeout_ms); }
  const FaceWriterCounters& counters() const { return *counters_; }

 private:
  struct Job {
    Payload face;
    cv::Mat rgb;
  };

  void run(Job& job) noexcept {
    std::string problem;
    try {
      problem = sink_.store(job.face, encode_rgb_jpeg(job.rgb, jpeg_quality_));
    } catch (const std::exception& e) {  // nothing may leave the thread
      problem = sink_.exception_problem(e.what());
    } catch (...) {
      problem = sink_.exception_problem("an unknown exception");
    }
    const bool was_failing = std::exchange(failing_, !problem.empty());
    if (!failing_) {
      ++counters_->stored;
      if (was_failing)
        report(false, [&] { return sink_.recovered_message(counters_->dropped - dropped_at_failure_); });
      return;
    }
    sink_.failed();
    if (!was_failing) {
      dropped_at_failure_ = counters_->dropped;
      report(true, [&] { return sink_.failing_message(problem); });
    }
    ++counters_->dropped;
  }

  // Reports the message `make` gives.
  template <typename Make>
  void report(bool warning, Make make) noexcept {
    try {
      if (report_) report_(warning, make());
    } catch (...) {  // a report that throws loses its message, never the thread
    }
  }

  FaceSink<Payload>& sink_;
  const int jpeg_quality_;
  const std::shared_ptr<FaceWriterCounters> counters_;
  const Report report_;
  bool failing_ = false;                  // writer thread only: the last face was not stored
  std::uint64_t dropped_at_failure_ = 0;  // counters_->dropped when the failure began
  JobThread<Job> jobs_;                   // last: stopped first, before what its jobs use
};

}  // namespace taconite::gst
