// The GPU part of the job page: a row per GPU of a node (who uses it, how much memory each
// rank holds there, its temperature against its slowdown point, and what is wrong with it)
// and a line per InfiniBand/RoCE port, built from the job API's node and ranks
// (views/gpu_views.h). Pure.
#pragma once

#include <string>

#include <boost/json.hpp>

namespace trainwatch::web {

// Rows for node `node` (its API object) using `ranks` (the API's ranks[]).
boost::json::array gpu_rows(const boost::json::object& node, const boost::json::array& ranks);
boost::json::array ib_port_rows(const boost::json::object& node);

// "GPU 5, 70.1 GB": a rank's GPU and its memory there, for its cell's label; "" when unknown.
std::string rank_gpu_text(const boost::json::object& rank);

}  // namespace trainwatch::web
