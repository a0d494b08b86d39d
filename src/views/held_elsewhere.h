// Reads of a job on a replica that does not hold it (jobs/job_peers.h): only the job's
// owner and standby apply its reports, so only they know its state now. Such a read is
// sent, as it came, to them, and their answer is the answer: a job looks the same through
// every replica, and none shows a state it stopped following.
#pragma once

#include <functional>
#include <string>

#include <boost/json.hpp>

#include "http/server.h"
#include "jobs/job_peers.h"

namespace trainwatch::views {

// True when the read went to the job's holders (`respond` is then called later, from a
// JobPeers thread): `peers` is set, the request did not come from another replica, and
// this replica does not hold `job`. When no holder answers: 503, saying so.
bool read_from_holders(jobs::JobPeers* peers, const std::string& job, const http::Request& request,
                       const http::Responder& respond);

// Whether this replica lists `job` in its own rows: always for a lone server; on replicas
// only the jobs it owns (each is listed once, by the replica that knows it now).
bool lists_here(jobs::JobPeers* peers, const std::string& job);

// The job list on replicas: `own` (the rows of the jobs this replica owns, as
// job_summary_json writes them) and every other replica's own rows, asked with kHopHeader
// so that none asks further, sorted by name. A replica that does not answer is left out,
// and `partial` says so. Without peers, or for a request from another replica, `own`
// alone. `done` runs on this thread or a JobPeers thread.
using JobRowsDone = std::function<void(boost::json::array rows, bool partial)>;
void gather_job_rows(jobs::JobPeers* peers, const http::Request& request, boost::json::array own,
                     JobRowsDone done);

}  // namespace trainwatch::views
