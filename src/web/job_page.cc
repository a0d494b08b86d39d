#include "web/job_page.h"

#include <cstdio>
#include <map>

#include "core/json_text.h"
#include "jobs/rank_health.h"
#include "views/held_elsewhere.h"
#include "views/job_view_worker.h"
#include "views/job_views.h"
#include "web/banner.h"
#include "web/dashboard_common.h"
#include "web/job_gpus.h"
#include "web/pages.h"
#include "web/time_text.h"

namespace trainwatch::web {
namespace {

namespace json = boost::json;
using http::Request;
using http::Responder;
using http::Response;

// Each health has an icon beside its colour, so the grid reads without colour.
std::string_view health_icon(std::string_view health) {
  if (health == "down") return "\u2715";
  if (health == "warning") return "!";
  if (health == "behind") return "\u2193";
  if (health == "finished") return "\u25a0";
  return "\u2713";
}

std::string text_of(const json::value& v) {
  if (v.is_string()) return std::string(v.as_string());
  if (v.is_null()) return "";
  return json_text(v);
}

// The cell's hover text and accessible name: who, health, and the numbers behind it.
std::string rank_label(const json::object& r) {
  std::string label =
      "rank " + text_of(r.at("rank")) + " on " + text_of(r.at("node")) + ": " + text_of(r.at("health"));
  if (const int64_t lag = r.at("lag").to_number<int64_t>(); lag > 0)
    label += ", " + std::to_string(lag) + (lag == 1 ? " step" : " steps") + " behind";
  label += "; step " + text_of(r.at("step"));
  if (r.at("step_time_ms").is_number()) {
    char buffer[48];
    std::snprintf(buffer, sizeof buffer, "; %.1f ms a step", r.at("step_time_ms").to_number<double>());
    label += buffer;
  }
  if (const std::string gpu = rank_gpu_text(r); !gpu.empty()) label += "; " + gpu;
  label += "; last seen " + text_of(r.at("last_seen"));
  if (!r.at("error").is_null()) label += "; error: " + text_of(r.at("error"));
  return label;
}

// "ranks 0-999" with its health, one row per range of a job summarised by rank ranges.
json::array rank_range_rows(const jobs::RankSummary& summary) {
  json::array rows;
  for (const auto& r : summary.ranges) {
    const std::string health(jobs::to_string(r.health));
    const std::string who = r.first == r.last
                                ? "rank " + std::to_string(r.first)
                                : "ranks " + std::to_string(r.first) + "\u2013" + std::to_string(r.last);
    rows.push_back(json::object{{"who", who}, {"health", health}, {"icon", health_icon(health)}});
  }
  return rows;
}

// An interruption's kept stacks (jobs/kept_stacks.h) as one folded text: each place, who
// was there, and its sample rank's frames, innermost first as faulthandler prints them.
std::string kept_stacks_text(const json::array& groups) {
  std::string text;
  for (const auto& gv : groups) {
    const json::object& g = gv.as_object();
    std::string ranks;
    for (const auto& r : g.at("ranks").as_array()) ranks += (ranks.empty() ? "" : ",") + text_of(r);
    const auto count = g.at("rank_count").to_number<int64_t>();
    if (count > static_cast<int64_t>(g.at("ranks").as_array().size()))
      ranks += ",… (" + std::to_string(count) + ")";
    text += (count == 1 ? "rank " : "ranks ") + ranks + " " + text_of(g.at("place")) +
            (g.at("culprit").as_bool() ? "  ← the others waited for it" : "") + "\n";
    text += "  rank " + text_of(g.at("rank")) + ":\n";
    for (const auto& fv : g.at("frames").as_array()) {
      const json::object& f = fv.as_object();
      text += "    " + text_of(f.at("function")) + "  " + text_of(f.at("file")) + ":" +
              text_of(f.at("line")) + "\n";
    }
    const json::array& native = g.at("native").as_array();
    if (!native.empty()) text += "  native:\n";
    for (const auto& fv : native) {
      const json::object& f = fv.as_object();
      const std::string module = text_of(f.at("module"));
      text += "    " + text_of(f.at("function")) + (module.empty() ? "" : "  " + module) + "\n";
    }
  }
  return text;
}

// The interruption ledger as table rows, newest first, with the job's goodput and attempts.
void add_ledger(json::object& m) {
  json::array rows;
  const json::array& entries = m.at("interruptions").as_array();
  for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
    const json::object& i = it->as_object();
    char cost[64];
    std::snprintf(cost, sizeof cost, "%.2f", i.at("gpu_hours_lost").to_number<double>());
    rows.push_back(
        json::object{{"attempt", i.at("attempt")},
                     {"cause", i.at("cause")},
                     {"detail", i.at("detail")},
                     {"failed_at", i.at("failed_at")},
                     {"failed_utc", utc_text_of(i.at("failed_at").as_string())},
                     {"detect_s", duration_words(Millis(i.at("detect_ms").to_number<int64_t>()))},
                     {"restart_s", duration_words(Millis(i.at("restart_ms").to_number<int64_t>()))},
                     {"steps_lost", i.at("steps_lost").is_null() ? json::value("?")
                                                                 : json::value(text_of(i.at("steps_lost")))},
                     {"gpu_hours", cost},
                     {"open", i.at("resumed_at").is_null()},
                     {"stacks_text", kept_stacks_text(i.at("stacks").as_array())}});
  }
  const json::object& g = m.at("goodput").as_object();
  char goodput[32];
  std::snprintf(goodput, sizeof goodput, "%.1f%%", 100.0 * g.at("ratio").to_number<double>());
  m["goodput_text"] = goodput;
  m["attempt_count"] = m.at("attempts").as_array().size();
  m["has_ledger"] = !rows.empty() || m.at("attempts").as_array().size() > 1;
  m["ledger"] = std::move(rows);
}

// The job's runs and their attempts as table rows, newest first: which launch is the
// current one, and how each before it ended.
void add_runs(json::object& m) {
  json::array rows;
  const json::array& attempts = m.at("attempts").as_array();
  for (auto it = attempts.rbegin(); it != attempts.rend(); ++it) {
    const json::object& a = it->as_object();
    const json::value& outcome = a.at("outcome");
    rows.push_back(json::object{
        {"run", a.at("run")},
        {"run_id", a.at("run_id").is_null() ? json::value("") : a.at("run_id")},
        {"attempt", a.at("number")},
        {"launcher_attempt", a.at("launcher_attempt")},
        {"started", a.at("started")},
        {"ended", a.at("ended")},
        {"started_utc", a.at("started").is_string() ? json::value(utc_text_of(a.at("started").as_string()))
                                                    : json::value(nullptr)},
        {"ended_utc", a.at("ended").is_string() ? json::value(utc_text_of(a.at("ended").as_string()))
                                                : json::value(nullptr)},
        {"outcome", outcome.is_null() ? json::value("current") : outcome},
        {"cause", a.at("cause")},
        {"max_step", a.at("max_step").is_null() ? json::value("") : json::value(text_of(a.at("max_step")))}});
  }
  m["run_count"] = m.at("runs").as_array().size();
  m["has_launches"] = !rows.empty();
  m["launches"] = std::move(rows);
}

// A rank's native frames (eu-stack's) as one text, innermost first; "" when none came.
std::string native_text(const json::object& stack) {
  const json::value& native = stack.at("native");
  std::string text;
  if (!native.is_object()) return text;
  for (const auto& tv : native.as_object().at("threads").as_array()) {
    const json::object& t = tv.as_object();
    text += "Thread " + text_of(t.at("tid")) + ":\n";
    for (const auto& fv : t.at("frames").as_array()) {
      const json::object& f = fv.as_object();
      text += "  " + text_of(f.at("function")) + "  " + text_of(f.at("module")) + "\n";
    }
  }
  return text;
}

// A Python thread's frames, one a line, innermost first.
std::string python_frames_text(const json::array& frames) {
  std::string text;
  for (const auto& fv : frames) {
    const json::object& f = fv.as_object();
    text +=
        "  " + text_of(f.at("function")) + "  " + text_of(f.at("file")) + ":" + text_of(f.at("line")) + "\n";
  }
  return text;
}

// Ranks whose agent captured a Python stack or native frames, each folded under where it
// puts the rank: the innermost frame first, as faulthandler prints it, then its DataLoader
// workers' main threads; the native frames folded again beneath.
json::array stack_rows(const json::array& ranks) {
  json::array rows;
  for (const auto& rv : ranks) {
    const json::object& r = rv.as_object();
    const json::value& stack = r.at("stack");
    if (!stack.is_object()) continue;
    std::string native = native_text(stack.as_object());
    if (stack.as_object().at("threads").as_array().empty() && native.empty()) continue;
    std::string text;
    for (const auto& tv : stack.as_object().at("threads").as_array()) {
      const json::object& t = tv.as_object();
      text += t.at("current").as_bool() ? "Current thread:\n" : "Thread:\n";
      text += python_frames_text(t.at("frames").as_array());
    }
    for (const auto& cv : stack.as_object().at("children").as_array()) {
      const json::object& c = cv.as_object();
      for (const auto& tv : c.at("threads").as_array()) {
        text += "Child process " + text_of(c.at("pid")) + ":\n";
        text += python_frames_text(tv.as_object().at("frames").as_array());
      }
    }
    rows.push_back(json::object{{"who", "rank " + text_of(r.at("rank")) + " (" + text_of(r.at("node")) + ")"},
                                {"place", stack.as_object().at("place")},
                                {"text", text},
                                {"native_text", native}});
  }
  return rows;
}

// The live part's model: the job's detail with its ranks grouped under their nodes.
json::object live_model(const WebContext& ctx, const jobs::JobSnapshot& snapshot) {
  json::object m = views::job_detail_json(ctx.engine, snapshot);
  if (auto view = ctx.engine.monitor(snapshot.state->name())) {
    m["status_word"] = status_word(view->state.status);
    m["status_icon"] = status_icon(view->state.status);
  }
  std::map<std::string, json::array> cells_by_node;
  std::map<std::string, int> counts;  // filled from the summary below, which covers every rank
  for (const auto& rv : m.at("ranks").as_array()) {
    const json::object& r = rv.as_object();
    json::object cell = r;
    const std::string health = text_of(r.at("health"));
    cell["icon"] = health_icon(health);
    cell["label"] = rank_label(r);
    const int64_t lag = r.at("lag").to_number<int64_t>();
    cell["lag_text"] =
        lag > 0 && health != "ok" ? json::value("\u2212" + std::to_string(lag)) : json::value(nullptr);
    cells_by_node[text_of(r.at("node"))].push_back(std::move(cell));
  }
  json::array nodes;
  for (const auto& nv : m.at("nodes").as_array()) {
    json::object node = nv.as_object();
    auto it = cells_by_node.find(text_of(node.at("name")));
    node["cells"] = it == cells_by_node.end() ? json::array() : std::move(it->second);
    if (it != cells_by_node.end()) cells_by_node.erase(it);
    node["last_seen_age"] = duration_words(Millis(node.at("last_seen_age_ms").to_number<int64_t>()));
    json::array gpus;
    for (const auto& gv : node.at("gpus").as_array()) {
      const json::object& g = gv.as_object();
      char text[96];
      std::snprintf(text, sizeof text, "GPU %s %.0f%% memory%s", text_of(g.at("index")).c_str(),
                    g.at("memory_pct").is_number() ? g.at("memory_pct").to_number<double>() : 0.0,
                    g.at("lost").as_bool() ? ", lost" : "");
      gpus.push_back(json::string(text));
    }
    node["gpu_text"] = std::move(gpus);
    node["gpu_rows"] = gpu_rows(node, m.at("ranks").as_array());
    node["ib_rows"] = ib_port_rows(node);
    node["has_gpus"] = !node.at("gpu_rows").as_array().empty();
    node["has_ib_ports"] = !node.at("ib_rows").as_array().empty();
    nodes.push_back(std::move(node));
  }
  m["rank_count"] = snapshot.rank_count;
  m["node_count"] = snapshot.node_count;
  const SystemTime now = ctx.clock.system_time();
  for (auto& f : m["findings"].as_array()) add_time_fields(f.as_object(), {"since"}, now);
  json::array legend;
  for (const auto& [health, count] : snapshot.rank_summary.counts)
    counts[std::string(jobs::to_string(health))] = static_cast<int>(count);
  for (const char* h : {"down", "warning", "behind", "ok", "finished"}) {
    if (counts[h] > 0)
      legend.push_back(json::object{{"health", h}, {"icon", health_icon(h)}, {"count", counts[h]}});
  }
  m["legend"] = std::move(legend);
  // The API's rank_ranges become rows of text: a job with too many ranks for a cell each
  // gets ranges by health, and cards only for the nodes its findings name.
  m["rank_ranges"] = json::array();
  if (snapshot.ranks_omitted) {
    m["rank_ranges"] = rank_range_rows(snapshot.rank_summary);
    m["more_ranges"] = snapshot.rank_summary.ranges_left_out > 0
                           ? json::value(snapshot.rank_summary.ranges_left_out)
                           : json::value(nullptr);
    m["detailed_limit"] = jobs::kMaxDetailedRanks;
  }
  // A summarised job's snapshot holds only the nodes its findings name, culprit first.
  m["named_nodes_of"] =
      snapshot.nodes_omitted && !nodes.empty() ? json::value(snapshot.node_count) : json::value(nullptr);
  m["grid"] = std::move(nodes);
  m["stacks"] = stack_rows(m.at("ranks").as_array());
  m["has_stacks"] = !m.at("stacks").as_array().empty();
  add_ledger(m);
  add_runs(m);
  return m;
}

void jobs_list(const WebContext& ctx, const Request& request, const Responder& respond) {
  json::array own;
  for (const auto& name : ctx.jobs.names()) {
    if (!views::lists_here(ctx.job_peers, name)) continue;
    auto snapshot = ctx.jobs.snapshot(name, jobs::SnapshotDetail::kSummary);
    if (snapshot) own.push_back(views::job_summary_json(ctx.engine, *snapshot));
  }
  json::object m = layout_model(ctx, request, "Jobs · trainwatch");
  views::gather_job_rows(ctx.job_peers, request, std::move(own),
                         [ctx, m = std::move(m), respond](json::array rows, bool) mutable {
                           for (auto& row : rows) {
                             auto* o = row.if_object();
                             const auto* name = o ? o->if_contains("name") : nullptr;
                             if (!name || !name->is_string()) continue;
                             if (auto view = ctx.engine.monitor(std::string(name->as_string()))) {
                               (*o)["status_word"] = status_word(view->state.status);
                               (*o)["status_icon"] = status_icon(view->state.status);
                             }
                           }
                           m["jobs"] = std::move(rows);
                           respond(html(200, render_page("jobs", m)));
                         });
}

void job_page(const WebContext& ctx, const Request& request, const Responder& respond, bool live_only) {
  const std::string& name = request.params.at("name");
  if (views::read_from_holders(ctx.job_peers, name, request, respond)) return;
  auto snapshot = ctx.jobs.snapshot(name);
  if (!snapshot) {
    if (live_only) return respond(Response::problem(404, "no job named '" + name + "'"));
    json::object m = layout_model(ctx, request, "Job not found · trainwatch");
    m["missing"] = name;
    return respond(html(404, render_page("job", m)));
  }
  json::object m = live_model(ctx, *snapshot);
  if (live_only) return respond(html(200, render_page("part_job_live", m)));
  for (auto& [key, value] : layout_model(ctx, request, name + " · job · trainwatch")) m[key] = value;
  m["job"] = name;
  respond(html(200, render_page("job", m)));
}

}  // namespace

void add_job_pages(http::Router& router, const WebContext& ctx) {
  const std::vector<std::string> get = {"GET", "HEAD"};
  // Pages render on the worker, off the HTTP threads that answer pings (views/job_view_worker.h).
  auto worker = std::make_shared<views::JobViewWorker>();
  auto off_http = [worker](const std::function<void(const Request&, Responder)>& page) {
    return [worker, page](const Request& r, Responder respond) {
      worker->post(std::move(respond), [page, r](Responder later) { page(r, std::move(later)); });
    };
  };
  router.add(get, "/jobs",
             off_http([ctx](const Request& r, const Responder& respond) { jobs_list(ctx, r, respond); }));
  router.add(get, "/jobs/{name}", off_http([ctx](const Request& r, const Responder& respond) {
               job_page(ctx, r, respond, false);
             }));
  router.add(get, "/jobs/{name}/live", off_http([ctx](const Request& r, const Responder& respond) {
               job_page(ctx, r, respond, true);
             }));
}

}  // namespace trainwatch::web
