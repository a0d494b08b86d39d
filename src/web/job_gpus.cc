#include "web/job_gpus.h"

#include <cstdio>
#include <vector>

#include "core/gpu_terms.h"

namespace trainwatch::web {
namespace {

namespace json = boost::json;

std::string gb(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GB", bytes / 1e9);
  return buf;
}

std::string scalar_text(const json::value& v) {
  if (v.is_string()) return std::string(v.as_string());
  if (v.is_int64()) return std::to_string(v.as_int64());
  if (v.is_uint64()) return std::to_string(v.as_uint64());
  return "";
}

// Who uses the GPU and what each holds there: "rank 5 (70.1 GB)".
std::string users(const std::string& node, int64_t index, const json::array& ranks) {
  std::string out;
  for (const auto& rv : ranks) {
    const json::object& r = rv.as_object();
    const json::value& gpu = r.at("gpu");
    if (!gpu.is_object() || scalar_text(r.at("node")) != node ||
        gpu.as_object().at("index").to_number<int64_t>() != index)
      continue;
    const json::value& used = gpu.as_object().at("memory_used_bytes");
    out += (out.empty() ? "rank " : ", rank ") + scalar_text(r.at("rank")) +
           (used.is_number() ? " (" + gb(used.to_number<double>()) + ")" : "");
  }
  return out;
}

std::string temperature(const json::object& g) {
  if (!g.at("temperature_c").is_number()) return "";
  std::string out = scalar_text(g.at("temperature_c")) + " \u00b0C";
  if (g.at("slowdown_temperature_c").is_number())
    out += " (slows at " + scalar_text(g.at("slowdown_temperature_c")) + ")";
  return out;
}

// What is wrong with it, worst first; "" when nothing is.
std::string problems(const json::object& g) {
  std::string out;
  auto say = [&](const std::string& s) { out += (out.empty() ? "" : "; ") + s; };
  if (g.at("lost").as_bool()) say("fallen off the bus");
  const json::value& action = g.at("recovery_action");
  if (action.is_string() && action.as_string() != "none") say("driver asks: " + scalar_text(action));
  const json::value& remap = g.at("row_remap");
  if (remap.is_object() && remap.as_object().at("failure").as_bool()) say("row remapping failed");
  if (remap.is_object() && remap.as_object().at("pending").as_bool()) say("rows pending remap");
  const json::value& links = g.at("nvlinks");
  if (links.is_object() && !links.as_object().at("down").as_array().empty())
    say("NVLink down: " + json::serialize(links.as_object().at("down")));
  for (const auto& x : g.at("xids").as_array()) say("XID " + scalar_text(x.as_object().at("code")));
  if (g.at("xids").as_array().empty() && g.at("last_xid").to_number<int64_t>() != 0)
    say("XID " + scalar_text(g.at("last_xid")));
  const json::value& reasons = g.at("clock_event_reasons");
  if (reasons.is_array()) {
    std::vector<std::string> words;
    for (const auto& r : reasons.as_array()) words.push_back(scalar_text(r));
    const std::string slowed = slowing_reasons_text(clock_event_bits(words) & kHardwareSlowdownBits);
    if (!slowed.empty()) say("slowed by " + slowed);
  }
  return out;
}

}  // namespace

json::array gpu_rows(const json::object& node, const json::array& ranks) {
  json::array rows;
  const std::string name = scalar_text(node.at("name"));
  for (const auto& gv : node.at("gpus").as_array()) {
    const json::object& g = gv.as_object();
    const int64_t index = g.at("index").to_number<int64_t>();
    const std::string trouble = problems(g);
    rows.push_back(json::object{{"index", index},
                                {"bus", scalar_text(g.at("pci_bus_id"))},
                                {"users", users(name, index, ranks)},
                                {"memory", gb(g.at("memory_used_bytes").to_number<double>()) + " of " +
                                               gb(g.at("memory_total_bytes").to_number<double>())},
                                {"temperature", temperature(g)},
                                {"problems", trouble},
                                {"troubled", !trouble.empty()},
                                {"health", trouble.empty() ? "ok" : "down"}});
  }
  return rows;
}

json::array ib_port_rows(const json::object& node) {
  json::array rows;
  for (const auto& pv : node.at("ib_ports").as_array()) {
    const json::object& p = pv.as_object();
    std::string text =
        scalar_text(p.at("device")) + "/" + scalar_text(p.at("port")) + " " + scalar_text(p.at("state"));
    if (p.at("rate_gbps").is_number()) {
      char rate[32];
      std::snprintf(rate, sizeof rate, " %.0f Gb/s", p.at("rate_gbps").to_number<double>());
      text += rate;
    }
    if (p.at("link_downed_rise").to_number<int64_t>() > 0)
      text += ", went down " + scalar_text(p.at("link_downed_rise")) + "\u00d7 recently";
    rows.push_back(json::string(text));
  }
  return rows;
}

std::string rank_gpu_text(const json::object& rank) {
  const json::value& gpu = rank.at("gpu");
  if (!gpu.is_object()) return "";
  const json::value& used = gpu.as_object().at("memory_used_bytes");
  return "GPU " + scalar_text(gpu.as_object().at("index")) +
         (used.is_number() ? ", " + gb(used.to_number<double>()) : "");
}

}  // namespace trainwatch::web
