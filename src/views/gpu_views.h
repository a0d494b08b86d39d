// The GPUs, the fabric and each rank's GPU in the job API (GET /api/v1/jobs/{name}) and the
// job page: a node's gpus[] and ib_ports[], a rank's "gpu". Optional report fields the
// agent did not send are null here.
#pragma once

#include <vector>

#include <boost/json.hpp>

#include "jobs/report.h"

namespace trainwatch::views {

boost::json::object gpu_json(const jobs::GpuReport& g);
boost::json::array ib_ports_json(const std::vector<jobs::IbPortReport>& ports);
// {index, memory_used_bytes, source}, or null when its agent could not tell.
boost::json::value gpu_of_rank_json(const jobs::RankReport& r);

}  // namespace trainwatch::views
