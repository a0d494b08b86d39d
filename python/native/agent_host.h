// The in-process agent for trainwatch.init(health_port=...): started on C++ threads so
// /health answers while Python holds the GIL. One per process.
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

namespace trainwatch::python {

// start_agent(job, dir, host, port, checkpoint_dir=None, nvme_path=None, stall_after_s=600,
//             gpu_memory_pct=95, disk_free_gb=10, host_memory_free_gb=1, nvml_library=None,
//             server=None, token=None, node=None, report_every_s=5)
// port < 0 serves no HTTP (the agent only pushes reports to `server`).
// Returns the bound port, or None after printing one line to stderr (port in use...).
PyObject* start_agent(PyObject* self, PyObject* args, PyObject* kwargs);
PyObject* stop_agent(PyObject* self, PyObject* unused);

}  // namespace trainwatch::python
