// Checker: runs one check of one monitor asynchronously and reports a CheckResult.
// Implementations run on the io_context they were built with and call `done` exactly
// once, on that context, never inline from check() itself.
#pragma once

#include <functional>
#include <memory>

#include "config/config.h"
#include "core/model.h"

namespace trainwatch::checks {

using CheckDone = std::function<void(CheckResult)>;

class Checker {
 public:
  virtual ~Checker() = default;
  virtual void check(std::shared_ptr<const MonitorConfig> monitor, CheckDone done) = 0;
};

}  // namespace trainwatch::checks
