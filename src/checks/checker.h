// Checker: runs one check of one monitor asynchronously and reports a CheckResult.
// Implementations run on the io_context they were built with and call `done` exactly
// once, on that context, never inline from check() itself.
#pragma once

#include <concepts>
#include <functional>
#include <memory>
#include <string_view>
#include <type_traits>
#include <utility>

#include "config/config.h"
#include "core/model.h"

namespace trainwatch::checks {

// Where a check's result goes, and whether the check is still wanted when it is about to
// send its first packet. A checker posts the check's start, and between the caller's
// decision and that moment the whole process may have been stopped (SIGSTOP, a frozen
// VM) long enough for another replica to take the monitor over: asked right before the
// first packet, `still_wanted` keeps the woken replica from checking what is no longer
// its. A check not wanted any more still reports once, marked CheckResult::not_started
// (kNotStarted is its cause in words): not a verdict on the monitor, never applied as one.
class CheckDone {
 public:
  CheckDone() = default;
  // Any callable taking the result; such a check is always wanted.
  template <typename Report>
    requires(!std::same_as<std::remove_cvref_t<Report>, CheckDone> && std::invocable<Report&, CheckResult>)
  CheckDone(Report report)  // NOLINT(google-explicit-constructor): a lambda is a CheckDone
      : report_(std::move(report)) {}
  CheckDone(std::function<void(CheckResult)> report, std::function<bool()> still_wanted)
      : report_(std::move(report)), still_wanted_(std::move(still_wanted)) {}

  void operator()(CheckResult result) const { report_(std::move(result)); }
  bool still_wanted() const { return !still_wanted_ || still_wanted_(); }

 private:
  std::function<void(CheckResult)> report_;
  std::function<bool()> still_wanted_;
};

inline constexpr std::string_view kNotStarted = "not started: no longer wanted";

class Checker {
 public:
  virtual ~Checker() = default;
  virtual void check(std::shared_ptr<const MonitorConfig> monitor, CheckDone done) = 0;
};

}  // namespace trainwatch::checks
