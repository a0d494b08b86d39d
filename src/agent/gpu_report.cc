#include "agent/gpu_report.h"

#include <algorithm>

#include <boost/json.hpp>

#include "core/gpu_terms.h"
#include "core/gpu_xid.h"

namespace trainwatch::agent {
namespace {

namespace json = boost::json;

// What the server needs of the links: how many, how many up, which are down after being
// up, and their errors summed (the per-link detail is on /metrics).
json::object nvlinks_json(const GpuInfo& g) {
  json::array down;
  int64_t active = 0, errors = 0;
  for (const auto& l : g.nvlinks) {
    active += l.active;
    if (l.was_active && !l.active) down.push_back(l.link);
    for (int64_t v : {l.replay, l.recovery, l.crc_flit, l.crc_data}) errors += std::max<int64_t>(0, v);
  }
  return json::object{
      {"count", g.nvlinks.size()}, {"active", active}, {"down", std::move(down)}, {"errors", errors}};
}

void add_memory_health(const GpuInfo& g, json::object& o) {
  if (g.row_remap) {
    o["row_remap"] = json::object{{"correctable", g.row_remap->correctable},
                                  {"uncorrectable", g.row_remap->uncorrectable},
                                  {"pending", g.row_remap->pending},
                                  {"failure", g.row_remap->failure}};
  }
  if (g.retired_pages) {
    o["retired_pages"] = json::object{{"single_bit", g.retired_pages->single_bit},
                                      {"double_bit", g.retired_pages->double_bit},
                                      {"pending", g.retired_pages->pending}};
  }
  if (g.recovery_action) {
    if (auto a = recovery_action_of(*g.recovery_action)) o["recovery_action"] = recovery_action_word(*a);
  }
}

void add_sensors(const GpuInfo& g, json::object& o) {
  if (g.temperature_c >= 0) o["temperature_c"] = g.temperature_c;
  if (g.slowdown_temperature_c > 0) o["slowdown_temperature_c"] = g.slowdown_temperature_c;
  if (g.clock_event_reasons) {
    json::array words;
    for (auto w : clock_event_words(*g.clock_event_reasons)) words.push_back(json::string(w));
    o["clock_event_reasons"] = std::move(words);
  }
  json::object pcie;
  if (g.pcie.replays >= 0) pcie["replays"] = g.pcie.replays;
  if (g.pcie.gen >= 0) pcie["gen"] = g.pcie.gen;
  if (g.pcie.max_gen >= 0) pcie["max_gen"] = g.pcie.max_gen;
  if (g.pcie.width >= 0) pcie["width"] = g.pcie.width;
  if (g.pcie.max_width >= 0) pcie["max_width"] = g.pcie.max_width;
  if (!pcie.empty()) o["pcie"] = std::move(pcie);
}

}  // namespace

json::array gpus_report_json(const NodeSnapshot& node) {
  json::array gpus;
  if (!node.nvml.value) return gpus;
  for (const auto& g : node.nvml.value->gpus) {
    json::object o{{"index", g.index},
                   {"name", g.name},
                   {"lost", g.lost},
                   {"memory_used_bytes", g.memory_used},
                   {"memory_total_bytes", g.memory_total},
                   {"ecc_uncorrected", g.ecc_uncorrected},
                   {"last_xid", g.last_xid},
                   {"last_xid_critical", g.last_xid != 0 && !is_application_xid(g.last_xid)},
                   {"xid_count", g.xid_count}};
    if (!g.uuid.empty()) o["uuid"] = g.uuid;
    if (!g.pci_bus_id.empty()) o["pci_bus_id"] = g.pci_bus_id;
    json::array xids;
    for (const auto& x : g.recent_xids)
      xids.push_back(json::object{{"code", x.code}, {"age_ms", std::max<int64_t>(0, node.now_ms - x.at_ms)}});
    if (!xids.empty()) o["xids"] = std::move(xids);
    add_sensors(g, o);
    add_memory_health(g, o);
    if (!g.nvlinks.empty()) o["nvlinks"] = nvlinks_json(g);
    gpus.push_back(std::move(o));
  }
  return gpus;
}

json::array ib_ports_report_json(const NodeSnapshot& node) {
  json::array ports;
  if (!node.fabric.value) return ports;
  for (const auto& p : node.fabric.value->ports) {
    json::object o{{"device", p.device},
                   {"port", p.port},
                   {"state", p.state},
                   {"phys_state", p.phys_state},
                   {"link_layer", p.link_layer},
                   {"was_active", p.was_active},
                   {"link_downed", p.link_downed},
                   {"link_downed_rise", p.link_downed_rise},
                   {"symbol_errors", p.symbol_errors},
                   {"symbol_error_rise", p.symbol_error_rise}};
    if (p.rate_gbps >= 0) o["rate_gbps"] = p.rate_gbps;
    ports.push_back(std::move(o));
  }
  return ports;
}

json::value rank_gpu_report_json(const RankView& r) {
  if (!r.gpu) return nullptr;
  json::object o{{"index", r.gpu->index}, {"source", r.gpu->source}};
  if (r.gpu->memory_used >= 0) o["memory_used_bytes"] = r.gpu->memory_used;
  return o;
}

}  // namespace trainwatch::agent
