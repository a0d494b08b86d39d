// A thin C++ layer over trainwatch.h: RAII for the handle, methods for the calls.
// Same contract as the C header: nothing throws, a failed open gives a no-op reporter, one
// writer thread per Reporter.
#pragma once

#include <cstdint>
#include <string>

#include "trainwatch/trainwatch.h"

namespace trainwatch {

class Reporter {
 public:
  // Opens from the environment (RANK, WORLD_SIZE, TRAINWATCH_JOB, ...).
  Reporter() { status_ = tw_open(nullptr, &h_); }
  explicit Reporter(const tw_options& options) { status_ = tw_open(&options, &h_); }
  ~Reporter() { tw_close(h_); }
  Reporter(const Reporter&) = delete;
  Reporter& operator=(const Reporter&) = delete;

  tw_status open_status() const { return status_; }
  bool enabled() const { return tw_is_enabled(h_) != 0; }
  tw_handle* handle() const { return h_; }

  tw_status status(tw_run_status s) { return tw_set_status(h_, s); }
  tw_status step(int64_t step, double loss) { return tw_step(h_, step, loss); }
  tw_status step(const tw_step_info& info) { return tw_step_ex(h_, &info); }
  tw_status checkpoint_begin(int64_t step, const std::string& path = "") {
    return tw_checkpoint_begin(h_, step, path.c_str());
  }
  tw_status checkpoint_end(bool ok, uint64_t bytes = 0) { return tw_checkpoint_end(h_, ok ? 1 : 0, bytes); }
  tw_status error(const std::string& message) { return tw_error(h_, message.c_str()); }
  tw_status gauge(const std::string& name, double value) { return tw_gauge(h_, name.c_str(), value); }
  tw_status collective_begin(tw_collective kind) { return tw_collective_begin(h_, kind); }
  tw_status collective_end() { return tw_collective_end(h_); }
  tw_status phase(tw_phase p) { return tw_set_phase(h_, p); }

 private:
  tw_handle* h_ = nullptr;
  tw_status status_ = TW_OK;
};

}  // namespace trainwatch
