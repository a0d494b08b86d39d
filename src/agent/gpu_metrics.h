// The GPUs' and the fabric's part of the agent's /metrics: trainwatch_gpu_* (dcgm-exporter's
// fields as a guide, in Prometheus base units) labelled {gpu, uuid, training_job} and
// {rank} where the GPU serves ranks of the job, and trainwatch_ib_* per port. A value NVML
// or sysfs does not give is left out, never written as -1. Pure.
#pragma once

#include "agent/node_snapshot.h"
#include "core/prometheus.h"

namespace trainwatch::agent {

void write_gpu_metrics(const NodeSnapshot& node, PrometheusWriter& m);
void write_fabric_metrics(const NodeSnapshot& node, PrometheusWriter& m);

}  // namespace trainwatch::agent
