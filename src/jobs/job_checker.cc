#include "jobs/job_checker.h"

#include <boost/asio/post.hpp>

namespace trainwatch::jobs {

void JobChecker::check(std::shared_ptr<const MonitorConfig> monitor, checks::CheckDone done) {
  CheckResult result = registry_.evaluate(*monitor);
  // The Checker contract: `done` runs on the io_context, never inline from check().
  boost::asio::post(
      io_, [done = std::move(done), result = std::move(result)]() mutable { done(std::move(result)); });
}

}  // namespace trainwatch::jobs
