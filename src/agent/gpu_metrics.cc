#include "agent/gpu_metrics.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/gpu_health.h"
#include "core/gpu_terms.h"

namespace trainwatch::agent {
namespace {

using Value = std::optional<double>;

Value known(int64_t v) { return v >= 0 ? Value(static_cast<double>(v)) : std::nullopt; }
Value flag(bool v) { return v ? 1.0 : 0.0; }

// One gauge or counter with one sample a GPU.
struct GpuMetric {
  std::string_view name, type, help;
  Value (*get)(const GpuInfo&);
};

const GpuMetric kGpuMetrics[] = {
    {"trainwatch_gpu_lost", "gauge", "1 when NVML says the GPU has fallen off the bus.",
     [](const GpuInfo& g) { return flag(g.lost); }},
    {"trainwatch_gpu_memory_used_bytes", "gauge", "GPU memory in use.",
     [](const GpuInfo& g) { return Value(static_cast<double>(g.memory_used)); }},
    {"trainwatch_gpu_memory_total_bytes", "gauge", "GPU memory size.",
     [](const GpuInfo& g) { return Value(static_cast<double>(g.memory_total)); }},
    {"trainwatch_gpu_utilization_percent", "gauge", "GPU utilisation.",
     [](const GpuInfo& g) { return known(g.utilization_pct); }},
    {"trainwatch_gpu_temperature_celsius", "gauge", "GPU temperature.",
     [](const GpuInfo& g) { return known(g.temperature_c); }},
    {"trainwatch_gpu_slowdown_temperature_celsius", "gauge", "The temperature at which the GPU slows itself.",
     [](const GpuInfo& g) { return known(g.slowdown_temperature_c); }},
    {"trainwatch_gpu_power_watts", "gauge", "GPU power draw.",
     [](const GpuInfo& g) { return g.power_w >= 0 ? Value(g.power_w) : std::nullopt; }},
    {"trainwatch_gpu_sm_clock_hertz", "gauge", "SM clock.",
     [](const GpuInfo& g) { return g.sm_clock_mhz >= 0 ? Value(g.sm_clock_mhz * 1e6) : std::nullopt; }},
    {"trainwatch_gpu_memory_clock_hertz", "gauge", "Memory clock.",
     [](const GpuInfo& g) {
       return g.memory_clock_mhz >= 0 ? Value(g.memory_clock_mhz * 1e6) : std::nullopt;
     }},
    {"trainwatch_gpu_clock_event_reasons", "gauge",
     "Why the clocks are below their maximum: NVML's nvmlClocksEventReason bits.",
     [](const GpuInfo& g) {
       return g.clock_event_reasons ? Value(static_cast<double>(*g.clock_event_reasons)) : std::nullopt;
     }},
    {"trainwatch_gpu_ecc_uncorrected_errors_total", "counter",
     "Uncorrected ECC errors since the driver loaded.",
     [](const GpuInfo& g) { return known(g.ecc_uncorrected); }},
    {"trainwatch_gpu_row_remap_pending", "gauge", "1 while remapped memory rows wait for a GPU reset.",
     [](const GpuInfo& g) { return g.row_remap ? flag(g.row_remap->pending) : std::nullopt; }},
    {"trainwatch_gpu_row_remap_failure", "gauge", "1 once a memory row remapping has failed.",
     [](const GpuInfo& g) { return g.row_remap ? flag(g.row_remap->failure) : std::nullopt; }},
    {"trainwatch_gpu_retired_pages_pending", "gauge", "1 while retired memory pages wait for a reset.",
     [](const GpuInfo& g) { return g.retired_pages ? flag(g.retired_pages->pending) : std::nullopt; }},
    {"trainwatch_gpu_pcie_replays_total", "counter", "PCIe replays of the GPU's link.",
     [](const GpuInfo& g) { return known(g.pcie.replays); }},
    {"trainwatch_gpu_pcie_link_generation", "gauge", "Current PCIe link generation.",
     [](const GpuInfo& g) { return known(g.pcie.gen); }},
    {"trainwatch_gpu_pcie_link_generation_max", "gauge", "Maximum PCIe link generation.",
     [](const GpuInfo& g) { return known(g.pcie.max_gen); }},
    {"trainwatch_gpu_pcie_link_width", "gauge", "Current PCIe link width (lanes).",
     [](const GpuInfo& g) { return known(g.pcie.width); }},
    {"trainwatch_gpu_pcie_link_width_max", "gauge", "Maximum PCIe link width (lanes).",
     [](const GpuInfo& g) { return known(g.pcie.max_width); }},
    {"trainwatch_gpu_recovery_action", "gauge",
     "The driver's GPU recovery action: 0 none, 1 GPU reset, 2 node reboot, 3 drain P2P, 4 drain and reset.",
     [](const GpuInfo& g) { return g.recovery_action ? Value(*g.recovery_action) : std::nullopt; }},
    {"trainwatch_gpu_xid_events_total", "counter", "XID events seen since the agent started.",
     [](const GpuInfo& g) { return Value(static_cast<double>(g.xid_count)); }},
    {"trainwatch_gpu_last_xid", "gauge", "The latest XID seen since the agent started; 0 for none.",
     [](const GpuInfo& g) { return Value(g.last_xid); }},
};

// The labels of one GPU's samples, kept alive while they are written.
struct GpuLabels {
  std::string gpu, uuid, ranks;
  Labels with(std::string_view job) const {
    Labels l{{"gpu", gpu}, {"uuid", uuid}, {"training_job", job}};
    if (!ranks.empty()) l.emplace_back("rank", ranks);
    return l;
  }
};

std::vector<GpuLabels> labels_of(const NodeSnapshot& node, const std::vector<GpuInfo>& gpus) {
  std::vector<GpuLabels> out;
  for (const auto& g : gpus) {
    GpuLabels l{std::to_string(g.index), g.uuid, ""};
    for (int r : ranks_on_gpu(node, g.index)) l.ranks += (l.ranks.empty() ? "" : ",") + std::to_string(r);
    out.push_back(std::move(l));
  }
  return out;
}

// Families whose samples carry a label of their own beside the GPU's.
void write_detail_metrics(const NodeSnapshot& node, const std::vector<GpuInfo>& gpus,
                          const std::vector<GpuLabels>& labels, PrometheusWriter& m) {
  m.family("trainwatch_gpu_info", "gauge", "1 for each GPU, with its name and PCI bus id.");
  for (size_t i = 0; i < gpus.size(); ++i) {
    Labels l = labels[i].with(node.job);
    l.emplace_back("name", gpus[i].name);
    l.emplace_back("pci_bus_id", gpus[i].pci_bus_id);
    m.sample("trainwatch_gpu_info", l, 1);
  }
  m.family("trainwatch_gpu_clock_event_reason_active", "gauge", "1 while this reason holds the clocks down.");
  for (size_t i = 0; i < gpus.size(); ++i) {
    if (!gpus[i].clock_event_reasons) continue;
    for (const auto& r : clock_event_reasons()) {
      Labels l = labels[i].with(node.job);
      l.emplace_back("reason", r.word);
      m.sample("trainwatch_gpu_clock_event_reason_active", l, (*gpus[i].clock_event_reasons & r.bit) ? 1 : 0);
    }
  }
  m.family("trainwatch_gpu_remapped_rows_total", "counter", "Memory rows remapped, by the kind of error.");
  m.family("trainwatch_gpu_retired_pages_total", "counter", "Memory pages retired, by cause.");
  for (size_t i = 0; i < gpus.size(); ++i) {
    const GpuInfo& g = gpus[i];
    auto by = [&](std::string_view name, std::string_view cause, double v) {
      Labels l = labels[i].with(node.job);
      l.emplace_back("cause", cause);
      m.sample(name, l, v);
    };
    if (g.row_remap) {
      by("trainwatch_gpu_remapped_rows_total", "correctable", g.row_remap->correctable);
      by("trainwatch_gpu_remapped_rows_total", "uncorrectable", g.row_remap->uncorrectable);
    }
    if (g.retired_pages) {
      by("trainwatch_gpu_retired_pages_total", "single_bit", g.retired_pages->single_bit);
      by("trainwatch_gpu_retired_pages_total", "double_bit", g.retired_pages->double_bit);
    }
  }
}

void write_nvlink_metrics(const NodeSnapshot& node, const std::vector<GpuInfo>& gpus,
                          const std::vector<GpuLabels>& labels, PrometheusWriter& m) {
  m.family("trainwatch_gpu_nvlink_up", "gauge", "1 while the NVLink is active.");
  m.family("trainwatch_gpu_nvlink_errors_total", "counter", "NVLink data-link errors, by counter.");
  for (size_t i = 0; i < gpus.size(); ++i) {
    for (const auto& link : gpus[i].nvlinks) {
      const std::string number = std::to_string(link.link);
      Labels l = labels[i].with(node.job);
      l.emplace_back("link", number);
      m.sample("trainwatch_gpu_nvlink_up", l, link.active ? 1 : 0);
      const std::pair<std::string_view, int64_t> counters[] = {{"replay", link.replay},
                                                               {"recovery", link.recovery},
                                                               {"crc_flit", link.crc_flit},
                                                               {"crc_data", link.crc_data}};
      for (const auto& [counter, value] : counters) {
        if (value < 0) continue;
        Labels lc = l;
        lc.emplace_back("counter", counter);
        m.sample("trainwatch_gpu_nvlink_errors_total", lc, static_cast<double>(value));
      }
    }
  }
}

void write_process_metrics(const NodeSnapshot& node, const std::vector<GpuInfo>& gpus, PrometheusWriter& m) {
  m.family("trainwatch_gpu_process_memory_used_bytes", "gauge",
           "GPU memory a compute process holds, with the rank it is when it is one of the job's.");
  for (const auto& g : gpus) {
    if (!g.processes) continue;
    const std::string gpu = std::to_string(g.index);
    for (const auto& p : *g.processes) {
      if (p.used_bytes < 0) continue;
      const std::string pid = std::to_string(p.pid);
      std::string rank;
      for (const auto& r : node.ranks) {
        if (r.alive && r.slot.pid == static_cast<int32_t>(p.pid)) rank = std::to_string(r.slot.rank);
      }
      Labels l{{"gpu", gpu}, {"uuid", g.uuid}, {"training_job", node.job}, {"pid", pid}};
      if (!rank.empty()) l.emplace_back("rank", rank);
      m.sample("trainwatch_gpu_process_memory_used_bytes", l, static_cast<double>(p.used_bytes));
    }
  }
}

}  // namespace

void write_gpu_metrics(const NodeSnapshot& node, PrometheusWriter& m) {
  if (!node.nvml.value) return;
  const std::vector<GpuInfo>& gpus = node.nvml.value->gpus;
  const std::vector<GpuLabels> labels = labels_of(node, gpus);
  for (const auto& metric : kGpuMetrics) {
    m.family(metric.name, metric.type, metric.help);
    for (size_t i = 0; i < gpus.size(); ++i) {
      if (auto v = metric.get(gpus[i])) m.sample(metric.name, labels[i].with(node.job), *v);
    }
  }
  write_detail_metrics(node, gpus, labels, m);
  write_nvlink_metrics(node, gpus, labels, m);
  write_process_metrics(node, gpus, m);
}

void write_fabric_metrics(const NodeSnapshot& node, PrometheusWriter& m) {
  if (!node.fabric.value) return;
  struct PortMetric {
    std::string_view name, type, help;
    Value (*get)(const IbPortInfo&);
  };
  static const PortMetric kPortMetrics[] = {
      {"trainwatch_ib_port_up", "gauge", "1 while the InfiniBand/RoCE port is ACTIVE.",
       [](const IbPortInfo& p) { return flag(p.active()); }},
      {"trainwatch_ib_port_rate_bytes_per_second", "gauge", "The port's link rate.",
       [](const IbPortInfo& p) { return p.rate_gbps >= 0 ? Value(p.rate_gbps * 1e9 / 8) : std::nullopt; }},
      {"trainwatch_ib_link_downed_total", "counter",
       "Times the port's link went down (counters/link_downed).",
       [](const IbPortInfo& p) { return known(p.link_downed); }},
      {"trainwatch_ib_symbol_errors_total", "counter", "Symbol errors on the link (counters/symbol_error).",
       [](const IbPortInfo& p) { return known(p.symbol_errors); }},
      {"trainwatch_ib_link_error_recovery_total", "counter",
       "Link error recoveries (counters/link_error_recovery).",
       [](const IbPortInfo& p) { return known(p.link_error_recovery); }},
      {"trainwatch_ib_port_rcv_errors_total", "counter",
       "Packets received with errors (counters/port_rcv_errors).",
       [](const IbPortInfo& p) { return known(p.rcv_errors); }},
  };
  for (const auto& metric : kPortMetrics) {
    m.family(metric.name, metric.type, metric.help);
    for (const auto& p : node.fabric.value->ports) {
      const std::string port = std::to_string(p.port);
      if (auto v = metric.get(p))
        m.sample(
            metric.name,
            {{"device", p.device}, {"port", port}, {"link_layer", p.link_layer}, {"training_job", node.job}},
            *v);
    }
  }
}

}  // namespace trainwatch::agent
