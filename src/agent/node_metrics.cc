#include "agent/node_metrics.h"

#include <string_view>

#include "agent/gpu_metrics.h"
#include "core/prometheus.h"

namespace trainwatch::agent {

namespace {

void write_rank_metrics(const NodeSnapshot& node, PrometheusWriter& m) {
  const std::string& job = node.job;
  struct RankMetric {
    std::string_view name;
    std::string_view type;
    std::string_view help;
    double (*get)(const RankView&);
  };
  static const RankMetric kRankMetrics[] = {
      {"trainwatch_rank_alive", "gauge", "1 while the rank's process exists.",
       [](const RankView& r) { return r.alive ? 1.0 : 0.0; }},
      {"trainwatch_rank_status", "gauge",
       "0 initializing 1 training 2 checkpointing 3 evaluating 4 finished 5 failed.",
       [](const RankView& r) { return static_cast<double>(r.slot.status); }},
      {"trainwatch_rank_step", "gauge", "Last reported step.",
       [](const RankView& r) { return static_cast<double>(r.slot.step); }},
      {"trainwatch_rank_loss", "gauge", "Last reported loss.", [](const RankView& r) { return r.slot.loss; }},
      {"trainwatch_rank_loss_scale", "gauge", "Last reported fp16 loss scale.",
       [](const RankView& r) { return r.slot.loss_scale; }},
      {"trainwatch_rank_overflow_steps_total", "counter", "Steps skipped on fp16 overflow.",
       [](const RankView& r) { return static_cast<double>(r.slot.overflow_total); }},
      {"trainwatch_rank_nonfinite_losses_total", "counter", "Steps that reported a NaN or infinite loss.",
       [](const RankView& r) { return static_cast<double>(r.slot.nonfinite_total); }},
      {"trainwatch_rank_tokens_total", "counter", "Tokens processed.",
       [](const RankView& r) { return static_cast<double>(r.slot.tokens); }},
      {"trainwatch_rank_samples_total", "counter", "Samples processed.",
       [](const RankView& r) { return static_cast<double>(r.slot.samples); }},
      {"trainwatch_rank_steps_per_second", "gauge", "Step rate seen by the agent.",
       [](const RankView& r) { return r.steps_per_s; }},
      {"trainwatch_rank_last_step_timestamp_seconds", "gauge", "When the agent saw the last step.",
       [](const RankView& r) { return static_cast<double>(r.last_step_ms) / 1000.0; }},
      {"trainwatch_rank_last_checkpoint_step", "gauge", "Step of the last checkpoint written successfully.",
       [](const RankView& r) { return static_cast<double>(r.slot.last_ok_checkpoint_step); }},
  };
  for (const auto& rm : kRankMetrics) {
    m.family(rm.name, rm.type, rm.help);
    for (const auto& r : node.ranks)
      m.sample(rm.name, {{"training_job", job}, {"rank", std::to_string(r.slot.rank)}}, rm.get(r));
  }
}

// The watched paths, host memory and the rendezvous, each only once it has been probed.
void write_host_metrics(const NodeSnapshot& node, PrometheusWriter& m) {
  if (node.disks.value) {
    m.family("trainwatch_disk_free_bytes", "gauge", "Free space on a watched path.");
    for (const auto& d : *node.disks.value)
      m.sample("trainwatch_disk_free_bytes", {{"name", d.name}, {"path", d.path}},
               static_cast<double>(d.free_bytes));
  }
  if (node.memory.value && node.memory.value->ok) {
    m.family("trainwatch_host_memory_available_bytes", "gauge", "MemAvailable from /proc/meminfo.");
    m.sample("trainwatch_host_memory_available_bytes", {},
             static_cast<double>(node.memory.value->available_bytes));
  }
  if (node.rendezvous.value && node.rendezvous.value->checked) {
    m.family("trainwatch_rendezvous_up", "gauge", "1 when MASTER_ADDR:MASTER_PORT accepts TCP connections.");
    m.sample("trainwatch_rendezvous_up", {{"training_job", node.job}},
             node.rendezvous.value->listening ? 1 : 0);
  }
}

}  // namespace

std::string node_metrics(const NodeSnapshot& node, bool healthy) {
  PrometheusWriter m;
  m.family("trainwatch_agent_healthy", "gauge", "1 when GET /health answers 200.");
  m.sample("trainwatch_agent_healthy", {{"training_job", node.job}}, healthy ? 1 : 0);
  write_rank_metrics(node, m);
  write_gpu_metrics(node, m);
  write_fabric_metrics(node, m);
  write_host_metrics(node, m);
  return m.take();
}

}  // namespace trainwatch::agent
