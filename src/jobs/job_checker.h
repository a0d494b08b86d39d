// The Checker for `type: job` monitors: a check is one analysis of the job's last reports
// (the reports arrive by push; nothing is fetched). Its result takes the same path as
// every other check: state machine, incidents, store, alerts.
#pragma once

#include <boost/asio/io_context.hpp>

#include "checks/checker.h"
#include "jobs/job_registry.h"

namespace trainwatch::jobs {

class JobChecker final : public checks::Checker {
 public:
  JobChecker(boost::asio::io_context& io, JobRegistry& registry) : io_(io), registry_(registry) {}
  void check(std::shared_ptr<const MonitorConfig> monitor, checks::CheckDone done) override;

 private:
  boost::asio::io_context& io_;
  JobRegistry& registry_;
};

}  // namespace trainwatch::jobs
