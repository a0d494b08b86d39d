#include "agent/gpu_health.h"

#include <cmath>
#include <cstdio>
#include <set>

#include <boost/json.hpp>

#include "core/gpu_terms.h"
#include "core/gpu_xid.h"

namespace trainwatch::agent {
namespace json = boost::json;

namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

void add(HealthReport& h, std::string code, std::string message) {
  h.reasons.push_back({std::move(code), std::move(message)});
}
void warn(HealthReport& h, std::string code, std::string message) {
  h.warnings.push_back({std::move(code), std::move(message)});
}

std::string ranks_text(const std::vector<int>& ranks) {
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i) out += (i ? ", " : "") + std::to_string(ranks[i]);
  return out;
}

// Each XID of the GPU's recent ones once, newest first.
void xid_reasons(const std::string& who, const GpuInfo& g, HealthReport& h) {
  std::set<unsigned> said;
  for (auto it = g.recent_xids.rbegin(); it != g.recent_xids.rend(); ++it) {
    if (!said.insert(it->code).second) continue;
    const XidInfo x = describe_xid(it->code);
    std::string msg = who + ": " + xid_sentence(it->code);
    if (x.cls == XidClass::kApplication) {
      warn(h, "gpu_xid", msg + " (usually the application's own fault)");
    } else if (x.cls == XidClass::kInformational) {
      warn(h, "gpu_xid", msg);
    } else {
      add(h, "gpu_xid", msg);
    }
  }
}

void memory_health_reasons(const std::string& who, const GpuInfo& g, HealthReport& h) {
  if (g.row_remap && g.row_remap->failure)
    add(h, "gpu_row_remap_failed", who + ": a memory row remapping failed; the GPU needs service");
  if (g.row_remap && g.row_remap->pending)
    add(h, "gpu_row_remap_pending", who + ": memory rows are pending remapping; reset the GPU to apply them");
  if (g.retired_pages && g.retired_pages->pending)
    warn(h, "gpu_pages_pending", who + ": memory pages are pending retirement; reset the GPU to retire them");
  if (g.recovery_action && *g.recovery_action != 0) {
    const auto action = recovery_action_of(*g.recovery_action);
    add(h, "gpu_recovery_action",
        who + ": the driver's recovery action is " +
            (action ? std::string(recovery_action_word(*action)) + " (" +
                          std::string(recovery_action_text(*action)) + ")"
                    : std::to_string(*g.recovery_action)));
  }
}

void link_and_clock_reasons(const std::string& who, const GpuInfo& g, HealthReport& h) {
  for (const auto& l : g.nvlinks) {
    if (l.was_active && !l.active)
      add(h, "nvlink_down", who + ": NVLink " + std::to_string(l.link) + " is down (it was up)");
  }
  if (g.temperature_c >= 0 && g.slowdown_temperature_c > 0 && g.temperature_c >= g.slowdown_temperature_c) {
    warn(h, "gpu_hot",
         who + ": " + std::to_string(g.temperature_c) + " \u00b0C, at or above its slowdown temperature (" +
             std::to_string(g.slowdown_temperature_c) + " \u00b0C)");
  }
  if (g.clock_event_reasons && (*g.clock_event_reasons & kHardwareSlowdownBits))
    warn(h, "gpu_throttled",
         who + ": clocks held down by " +
             slowing_reasons_text(*g.clock_event_reasons & kHardwareSlowdownBits));
}

json::value rank_list(const std::vector<int>& ranks) {
  json::array out;
  for (int r : ranks) out.push_back(r);
  return out;
}

json::value optional_int(int v) { return v >= 0 ? json::value(v) : json::value(nullptr); }

json::object health_fields(const GpuInfo& g) {
  json::object o;
  o["row_remap"] = g.row_remap ? json::value(json::object{{"correctable", g.row_remap->correctable},
                                                          {"uncorrectable", g.row_remap->uncorrectable},
                                                          {"pending", g.row_remap->pending},
                                                          {"failure", g.row_remap->failure}})
                               : json::value(nullptr);
  o["retired_pages"] = g.retired_pages ? json::value(json::object{{"single_bit", g.retired_pages->single_bit},
                                                                  {"double_bit", g.retired_pages->double_bit},
                                                                  {"pending", g.retired_pages->pending}})
                                       : json::value(nullptr);
  o["pcie"] =
      json::object{{"replays", g.pcie.replays >= 0 ? json::value(g.pcie.replays) : json::value(nullptr)},
                   {"gen", optional_int(g.pcie.gen)},
                   {"max_gen", optional_int(g.pcie.max_gen)},
                   {"width", optional_int(g.pcie.width)},
                   {"max_width", optional_int(g.pcie.max_width)}};
  const auto action = g.recovery_action ? recovery_action_of(*g.recovery_action) : std::nullopt;
  o["recovery_action"] = action ? json::value(recovery_action_word(*action)) : json::value(nullptr);
  json::array reasons;
  if (g.clock_event_reasons) {
    for (auto word : clock_event_words(*g.clock_event_reasons)) reasons.push_back(json::string(word));
  }
  o["clock_event_reasons"] = g.clock_event_reasons ? json::value(std::move(reasons)) : json::value(nullptr);
  json::array links;
  for (const auto& l : g.nvlinks) {
    links.push_back(json::object{{"link", l.link},
                                 {"active", l.active},
                                 {"replay", l.replay},
                                 {"recovery", l.recovery},
                                 {"crc_flit", l.crc_flit},
                                 {"crc_data", l.crc_data}});
  }
  o["nvlinks"] = std::move(links);
  return o;
}

json::object gpu_json(const NodeSnapshot& node, const GpuInfo& g) {
  json::object o{{"index", g.index},
                 {"name", g.name},
                 {"uuid", g.uuid},
                 {"pci_bus_id", g.pci_bus_id},
                 {"lost", g.lost},
                 {"memory_used_gb", static_cast<double>(g.memory_used) / 1e9},
                 {"memory_total_gb", static_cast<double>(g.memory_total) / 1e9},
                 {"memory_pct", std::round(g.memory_pct() * 10) / 10},
                 {"gpu_utilization_pct", g.utilization_pct},
                 {"temperature_c", g.temperature_c},
                 {"slowdown_temperature_c", optional_int(g.slowdown_temperature_c)},
                 {"power_w", g.power_w},
                 {"sm_clock_mhz", optional_int(g.sm_clock_mhz)},
                 {"memory_clock_mhz", optional_int(g.memory_clock_mhz)},
                 {"ecc_uncorrected", g.ecc_uncorrected},
                 {"throttle_reasons", g.clock_event_reasons.value_or(0)},
                 {"last_xid", g.last_xid},
                 {"xid_events", g.xid_count},
                 {"ranks", rank_list(ranks_on_gpu(node, g.index))}};
  for (auto& [key, value] : health_fields(g)) o[key] = value;
  json::array procs;
  if (g.processes) {
    for (const auto& p : *g.processes)
      procs.push_back(
          json::object{{"pid", p.pid},
                       {"used_bytes", p.used_bytes >= 0 ? json::value(p.used_bytes) : json::value(nullptr)}});
  }
  o["processes"] = g.processes ? json::value(std::move(procs)) : json::value(nullptr);
  return o;
}

}  // namespace

std::vector<int> ranks_on_gpu(const NodeSnapshot& node, unsigned index) {
  std::vector<int> out;
  for (const auto& r : node.ranks) {
    if (r.gpu && r.gpu->index == index) out.push_back(r.slot.rank);
  }
  return out;
}

std::string gpu_label(const NodeSnapshot& node, const GpuInfo& g) {
  std::string inside = g.pci_bus_id;
  const std::vector<int> ranks = ranks_on_gpu(node, g.index);
  if (!ranks.empty()) inside += (inside.empty() ? "" : ", ") + ranks_text(ranks);
  return "GPU " + std::to_string(g.index) + (inside.empty() ? "" : " (" + inside + ")");
}

void gpu_reasons(const NodeSnapshot& node, const Thresholds& t, HealthReport& h) {
  if (node.nvml.hung) {
    add(h, "nvml_hung",
        "NVML has not answered" + (node.nvml_call.empty() ? "" : " " + node.nvml_call) + " for " +
            fmt("%.1f s", static_cast<double>(node.nvml.in_flight_for.count()) / 1000.0) + " (deadline " +
            fmt("%.0f s", static_cast<double>(node.probe_deadline.count()) / 1000.0) + ")");
  }
  if (!node.nvml.value) return;
  for (const auto& g : node.nvml.value->gpus) {
    const std::string who = gpu_label(node, g);
    if (g.lost) add(h, "gpu_lost", who + " has fallen off the bus (GPU_IS_LOST)");
    if (g.memory_total && g.memory_pct() >= t.gpu_memory_pct) {
      add(h, "gpu_memory",
          who + " memory " + fmt("%.1f%%", g.memory_pct()) + " \u2265 " + fmt("%g%%", t.gpu_memory_pct));
    }
    xid_reasons(who, g, h);
    memory_health_reasons(who, g, h);
    link_and_clock_reasons(who, g, h);
  }
}

void fabric_reasons(const NodeSnapshot& node, HealthReport& h) {
  if (node.fabric.hung)
    add(h, "fabric_hung", "reading the InfiniBand ports in sysfs has not finished within its deadline");
  if (!node.fabric.value) return;
  for (const auto& p : node.fabric.value->ports) {
    const std::string who = (p.link_layer == "Ethernet" ? "RoCE port " : "InfiniBand port ") + p.name();
    if (p.was_active && !p.active()) {
      add(h, "ib_port_down",
          who + " is " + (p.state.empty() ? "unreadable" : p.state) +
              (p.phys_state.empty() ? "" : " (" + p.phys_state + ")") + "; it was ACTIVE");
    } else if (p.link_downed_rise > 0) {
      warn(h, "ib_link_downed",
           who + " went down " + std::to_string(p.link_downed_rise) +
               (p.link_downed_rise == 1 ? " time" : " times") + " in the last " +
               std::to_string(kFabricWindow.count() / 60'000) + " min (link_downed " +
               std::to_string(p.link_downed) + ")");
    }
  }
}

void add_gpus(const NodeSnapshot& node, const Thresholds& t, json::object& root) {
  json::array gpus;
  bool oom_risk = false;
  if (node.nvml.value) {
    for (const auto& g : node.nvml.value->gpus) {
      oom_risk = oom_risk || (g.memory_total && g.memory_pct() >= t.gpu_memory_pct);
      gpus.push_back(gpu_json(node, g));
    }
  }
  root["gpus"] = std::move(gpus);
  root["oom_risk"] = oom_risk;
  json::object nvml{{"enabled", node.nvml_enabled}, {"hung", node.nvml.hung}};
  if (node.nvml.value) {
    nvml["library_loaded"] = node.nvml.value->library_loaded;
    nvml["note"] =
        node.nvml.value->library_loaded ? "" : "no NVML library: " + node.nvml.value->library_error;
  }
  root["nvml"] = std::move(nvml);
}

void add_fabric(const NodeSnapshot& node, json::object& root) {
  json::array ports;
  if (node.fabric.value) {
    for (const auto& p : node.fabric.value->ports) {
      ports.push_back(
          json::object{{"device", p.device},
                       {"port", p.port},
                       {"state", p.state},
                       {"phys_state", p.phys_state},
                       {"link_layer", p.link_layer},
                       {"rate_gbps", p.rate_gbps >= 0 ? json::value(p.rate_gbps) : json::value(nullptr)},
                       {"link_downed", p.link_downed},
                       {"link_downed_rise", p.link_downed_rise},
                       {"symbol_errors", p.symbol_errors},
                       {"symbol_error_rise", p.symbol_error_rise}});
    }
  }
  root["ib_ports"] = std::move(ports);
}

}  // namespace trainwatch::agent
