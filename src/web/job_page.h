// The dashboard's job pages:
//   GET /jobs               every job with its state, phase, step and findings
//   GET /jobs/{name}        the rank grid (one cell per rank, grouped by node, coloured by
//                           health and marked with an icon and lag), findings, nodes' GPUs,
//                           and charts of step time, loss, tokens/s and GPU memory
//   GET /jobs/{name}/live   the page's live part alone (header, grid, findings), which
//                           static/job.js swaps in every few seconds
// Rendered server-side from the job API's JSON (views/job_views.h): the page reads the same
// with JavaScript off, and every text is escaped by the template engine.
#pragma once

#include "http/server.h"
#include "web/web_context.h"

namespace trainwatch::web {

void add_job_pages(http::Router& router, const WebContext& context);

}  // namespace trainwatch::web
