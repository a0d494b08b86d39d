#include "views/gpu_views.h"

#include <cmath>

namespace trainwatch::views {
namespace {

namespace json = boost::json;

template <typename T>
json::value or_null(const std::optional<T>& v) {
  return v ? json::value(*v) : json::value(nullptr);
}

json::value text_or_null(const std::string& s) { return s.empty() ? json::value(nullptr) : json::value(s); }

json::object health_json(const jobs::GpuReport& g) {
  json::object o;
  o["row_remap"] = nullptr;
  if (g.row_remap) {
    o["row_remap"] = json::object{{"correctable", g.row_remap->correctable},
                                  {"uncorrectable", g.row_remap->uncorrectable},
                                  {"pending", g.row_remap->pending},
                                  {"failure", g.row_remap->failure}};
  }
  o["retired_pages"] = nullptr;
  if (g.retired_pages) {
    o["retired_pages"] = json::object{{"single_bit", g.retired_pages->single_bit},
                                      {"double_bit", g.retired_pages->double_bit},
                                      {"pending", g.retired_pages->pending}};
  }
  o["pcie"] = json::object{{"replays", or_null(g.pcie.replays)},
                           {"gen", or_null(g.pcie.gen)},
                           {"max_gen", or_null(g.pcie.max_gen)},
                           {"width", or_null(g.pcie.width)},
                           {"max_width", or_null(g.pcie.max_width)}};
  o["nvlinks"] = nullptr;
  if (g.nvlinks) {
    json::array down;
    for (int l : g.nvlinks->down) down.push_back(l);
    o["nvlinks"] = json::object{{"count", g.nvlinks->count},
                                {"active", g.nvlinks->active},
                                {"down", std::move(down)},
                                {"errors", g.nvlinks->errors}};
  }
  return o;
}

}  // namespace

json::object gpu_json(const jobs::GpuReport& g) {
  json::array xids, reasons;
  for (const auto& x : g.xids) xids.push_back(json::object{{"code", x.code}, {"age_ms", x.age_ms}});
  if (g.clock_event_reasons) {
    for (const auto& r : *g.clock_event_reasons) reasons.push_back(json::string(r));
  }
  json::object o{
      {"index", g.index},
      {"name", g.name},
      {"uuid", text_or_null(g.uuid)},
      {"pci_bus_id", text_or_null(g.pci_bus_id)},
      {"memory_used_bytes", g.memory_used},
      {"memory_total_bytes", g.memory_total},
      {"memory_pct", std::isfinite(g.memory_pct()) ? json::value(g.memory_pct()) : json::value(nullptr)},
      {"lost", g.lost},
      {"ecc_uncorrected", g.ecc_uncorrected},
      {"last_xid", g.last_xid},
      {"xids", std::move(xids)},
      {"temperature_c", or_null(g.temperature_c)},
      {"slowdown_temperature_c", or_null(g.slowdown_temperature_c)},
      {"clock_event_reasons", g.clock_event_reasons ? json::value(std::move(reasons)) : json::value(nullptr)},
      {"recovery_action", text_or_null(g.recovery_action)}};
  for (auto& [key, value] : health_json(g)) o[key] = value;
  return o;
}

json::array ib_ports_json(const std::vector<jobs::IbPortReport>& ports) {
  json::array out;
  for (const auto& p : ports) {
    out.push_back(json::object{{"device", p.device},
                               {"port", p.port},
                               {"state", p.state},
                               {"phys_state", p.phys_state},
                               {"link_layer", p.link_layer},
                               {"rate_gbps", or_null(p.rate_gbps)},
                               {"link_downed", p.link_downed},
                               {"link_downed_rise", p.link_downed_rise},
                               {"symbol_errors", p.symbol_errors}});
  }
  return out;
}

json::value gpu_of_rank_json(const jobs::RankReport& r) {
  if (!r.gpu) return nullptr;
  return json::object{
      {"index", r.gpu->index}, {"memory_used_bytes", or_null(r.gpu->memory_used)}, {"source", r.gpu->source}};
}

}  // namespace trainwatch::views
