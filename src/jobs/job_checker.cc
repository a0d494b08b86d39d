#include "jobs/job_checker.h"

#include <boost/asio/post.hpp>

namespace trainwatch::jobs {

JobChecker::~JobChecker() { stop(); }

void JobChecker::check(std::shared_ptr<const MonitorConfig> monitor, checks::CheckDone done) {
  boost::asio::post(analyses_, [this, monitor = std::move(monitor), done = std::move(done)]() mutable {
    CheckResult result = registry_.evaluate(*monitor);
    // The verdict goes back to the engine's thread, which applies it as any check result.
    boost::asio::post(
        io_, [done = std::move(done), result = std::move(result)]() mutable { done(std::move(result)); });
  });
}

}  // namespace trainwatch::jobs
