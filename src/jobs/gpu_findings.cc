#include "jobs/gpu_findings.h"

#include <cstdio>
#include <set>

#include "core/gpu_terms.h"
#include "core/gpu_xid.h"
#include "jobs/rank_set.h"

namespace trainwatch::jobs {
namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

Finding finding(FindingCode code, Severity severity, std::vector<int> ranks, const std::string& node,
                std::string message, int order, MonoTime since, bool node_fault) {
  Finding f{code, severity, std::move(ranks), node, std::move(message), order, since};
  f.node_fault = node_fault;
  return f;
}

// The ranks of node `name` whose agent says they use GPU `index`.
std::vector<int> ranks_on_gpu(const JobState& job, const std::string& name, const NodeRecord& n, int index) {
  std::vector<int> out;
  for (int rank : n.ranks) {
    auto it = job.ranks().find(rank);
    if (it == job.ranks().end() || it->second.node != name) continue;
    const auto& gpu = it->second.last.gpu;
    if (gpu && gpu->index == index) out.push_back(rank);
  }
  return out;
}

// The ranks of node `name` still running there (for a fault of the whole node).
std::vector<int> ranks_on_node(const JobState& job, const std::string& name, const NodeRecord& n) {
  std::vector<int> out;
  for (int rank : n.ranks) {
    auto it = job.ranks().find(rank);
    if (it != job.ranks().end() && it->second.node == name && it->second.last.alive) out.push_back(rank);
  }
  return out;
}

std::string gpu_text(const GpuReport& g) {
  return "GPU " + std::to_string(g.index) + (g.pci_bus_id.empty() ? "" : " " + g.pci_bus_id);
}

// "rank 5 (node-c, GPU 5 00000000:8A:00.0)", or "GPU 5 00000000:8A:00.0 on node-c" when no
// rank is known to use it.
std::string who(const std::string& node, const GpuReport& g, const std::vector<int>& ranks) {
  if (ranks.empty()) return gpu_text(g) + " on " + node;
  return ranks_phrase(ranks) + " (" + node + ", " + gpu_text(g) + ")";
}

MonoTime before(MonoTime t, int64_t age_ms) { return t - Millis(age_ms); }

// Each XID of the GPU's recent ones once, newest first, as core/gpu_xid.h classes it.
void xid_findings(const std::string& name, const NodeRecord& n, const GpuReport& g,
                  const std::vector<int>& ranks, GpuFindingOrders order, std::vector<Finding>& out) {
  std::vector<XidReport> xids = g.xids;
  if (xids.empty() && g.last_xid != 0) xids.push_back({g.last_xid, 0});  // an older agent: the last one only
  std::set<int> said;
  for (auto it = xids.rbegin(); it != xids.rend(); ++it) {
    if (it->code <= 0 || !said.insert(it->code).second) continue;
    const auto code = static_cast<unsigned>(it->code);
    const XidInfo x = describe_xid(code);
    const std::string text = who(name, g, ranks) + ": " + xid_sentence(code);
    const MonoTime since = before(n.last_seen, it->age_ms);
    switch (x.cls) {
      case XidClass::kNodeFault:
        out.push_back(
            finding(FindingCode::kGpuXid, Severity::kDown, ranks, name, text, order.fault, since, true));
        break;
      case XidClass::kApplicationHit:
        out.push_back(
            finding(FindingCode::kGpuXid, Severity::kDown, ranks, name, text, order.fault, since, false));
        break;
      case XidClass::kApplication:
        out.push_back(finding(FindingCode::kGpuXid, Severity::kWarning, ranks, name,
                              text + " (usually the application's own fault)", order.warning, since, false));
        break;
      case XidClass::kInformational:
        out.push_back(finding(FindingCode::kGpuXid, Severity::kWarning, ranks, name, text, order.warning,
                              since, false));
        break;
    }
  }
}

// Faults of the GPU itself: lost, uncorrectable memory, the driver's recovery action, links.
void fault_findings(const std::string& name, const NodeRecord& n, const GpuReport& g,
                    const std::vector<int>& ranks, GpuFindingOrders order, std::vector<Finding>& out) {
  const std::string w = who(name, g, ranks);
  auto fault = [&](FindingCode code, const std::string& what) {
    out.push_back(
        finding(code, Severity::kDown, ranks, name, w + ": " + what, order.fault, n.last_seen, true));
  };
  if (g.lost) fault(FindingCode::kGpuLost, "the GPU has fallen off the bus");
  if (g.ecc_uncorrected > 0)
    fault(FindingCode::kGpuEcc, std::to_string(g.ecc_uncorrected) + " uncorrectable ECC errors");
  if (g.row_remap && g.row_remap->failure)
    fault(FindingCode::kGpuRowRemapFailed, "a memory row remapping failed; the GPU needs service");
  if (g.row_remap && g.row_remap->pending)
    fault(FindingCode::kGpuRowRemapPending, "memory rows are pending remapping; reset the GPU to apply them");
  if (!g.recovery_action.empty() && g.recovery_action != "none") {
    const auto action = recovery_action_from_word(g.recovery_action);
    fault(FindingCode::kGpuRecoveryAction,
          "the driver's GPU recovery action is " + g.recovery_action +
              (action ? ": " + std::string(recovery_action_text(*action)) : ""));
  }
  if (g.nvlinks && !g.nvlinks->down.empty()) {
    std::string links;
    for (int l : g.nvlinks->down) links += (links.empty() ? "" : ", ") + std::to_string(l);
    fault(FindingCode::kNvlinkDown, (g.nvlinks->down.size() == 1 ? "NVLink " : "NVLinks ") + links +
                                        " down after being up (" + std::to_string(g.nvlinks->active) +
                                        " of " + std::to_string(g.nvlinks->count) + " active)");
  }
}

void warning_findings(const std::string& name, const NodeRecord& n, const GpuReport& g,
                      const std::vector<int>& ranks, const JobThresholds& t, GpuFindingOrders order,
                      std::vector<Finding>& out) {
  const std::string w = who(name, g, ranks);
  auto warning = [&](FindingCode code, const std::string& what) {
    out.push_back(
        finding(code, Severity::kWarning, ranks, name, w + ": " + what, order.warning, n.last_seen, false));
  };
  if (g.retired_pages && g.retired_pages->pending)
    warning(FindingCode::kGpuPagesPending,
            "memory pages are pending retirement; reset the GPU to retire them");
  if (g.temperature_c && g.slowdown_temperature_c && *g.slowdown_temperature_c > 0 &&
      *g.temperature_c >= *g.slowdown_temperature_c) {
    warning(FindingCode::kGpuHot, std::to_string(*g.temperature_c) +
                                      " \u00b0C, at or above its slowdown temperature (" +
                                      std::to_string(*g.slowdown_temperature_c) + " \u00b0C)");
  }
  if (g.clock_event_reasons) {
    const uint64_t hardware = clock_event_bits(*g.clock_event_reasons) & kHardwareSlowdownBits;
    if (hardware)
      warning(FindingCode::kGpuThrottled, "clocks held down by " + slowing_reasons_text(hardware));
  }
  if (g.memory_total && g.memory_pct() >= t.gpu_memory_pct) {
    warning(FindingCode::kGpuMemory, "memory " + fmt("%.1f%%", g.memory_pct()) +
                                         " >= " + fmt("%g%%", t.gpu_memory_pct) + " (out-of-memory risk)");
  }
}

}  // namespace

void gpu_findings(const JobState& job, const std::string& name, const NodeRecord& n, const JobThresholds& t,
                  GpuFindingOrders order, std::vector<Finding>& out) {
  for (const auto& g : n.gpus) {
    const std::vector<int> ranks = ranks_on_gpu(job, name, n, g.index);
    fault_findings(name, n, g, ranks, order, out);
    xid_findings(name, n, g, ranks, order, out);
    warning_findings(name, n, g, ranks, t, order, out);
  }
}

void fabric_findings(const JobState& job, const std::string& name, const NodeRecord& n,
                     GpuFindingOrders order, std::vector<Finding>& out) {
  if (n.ib_ports.empty()) return;
  const std::vector<int> ranks = ranks_on_node(job, name, n);
  const std::string there = ranks.empty() ? "" : "; " + ranks_phrase(ranks) + " run there";
  for (const auto& p : n.ib_ports) {
    const std::string port =
        (p.link_layer == "Ethernet" ? "RoCE port " : "InfiniBand port ") + p.name() + " on " + name;
    if (p.was_active && !p.active()) {
      out.push_back(finding(FindingCode::kIbPortDown, Severity::kDown, ranks, name,
                            port + " is " + (p.state.empty() ? "unreadable" : p.state) +
                                (p.phys_state.empty() ? "" : " (" + p.phys_state + ")") +
                                " after being ACTIVE" + there,
                            order.fault, n.last_seen, true));
    } else if (p.link_downed_rise > 0) {
      out.push_back(finding(FindingCode::kIbLinkDowned, Severity::kWarning, ranks, name,
                            port + " went down " + std::to_string(p.link_downed_rise) +
                                (p.link_downed_rise == 1 ? " time" : " times") + " recently (link_downed " +
                                std::to_string(p.link_downed - p.link_downed_rise) + " \u2192 " +
                                std::to_string(p.link_downed) + ")" + there,
                            order.warning, n.last_seen, true));
    }
  }
}

void explain_slow_gpus(const JobState& job, std::vector<Finding>& findings) {
  for (auto& f : findings) {
    if (f.code != FindingCode::kStraggler || f.ranks.size() != 1) continue;
    auto r = job.ranks().find(f.ranks.front());
    if (r == job.ranks().end() || !r->second.last.gpu) continue;
    auto n = job.nodes().find(r->second.node);
    if (n == job.nodes().end()) continue;
    for (const auto& g : n->second.gpus) {
      if (g.index != r->second.last.gpu->index || !g.clock_event_reasons) continue;
      const std::string slowed = slowing_reasons_text(clock_event_bits(*g.clock_event_reasons));
      if (slowed.empty()) continue;
      f.message += "; its " + gpu_text(g) + " is slowed by " + slowed +
                   (g.temperature_c ? " (" + std::to_string(*g.temperature_c) + " \u00b0C)" : "");
    }
  }
}

}  // namespace trainwatch::jobs
