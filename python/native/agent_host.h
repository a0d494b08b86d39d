// The in-process agent for trainwatch.init(server=... or health_port=...): started on C++
// threads so /health answers and reports go out while Python holds the GIL. One per node
// and job at a time: every local rank asked to host it competes for the agent role
// (role_lock.h); the holder runs the agent, the others wait for the role on a thread of
// their own and take it when the holder's agent stops or its process ends, or, as they exit
// themselves, for one sample and one last report when the role is free (the holder died).
//
// Fork: a child made by fork(2) inherits none of this. Its agent and waiter threads do not
// exist there, so an atfork child handler drops the host's state without touching it (no
// join, no lock, no destructor) and closes the child's copy of the role lock; stop_agent
// in the child does nothing, and its exit never waits on threads that are not there.
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

namespace trainwatch::python {

// start_agent(job, dir, host, port, checkpoint_dir=None, nvme_path=None, stall_after_s=600,
//             gpu_memory_pct=95, disk_free_gb=10, host_memory_free_gb=1, nvml_library=None,
//             server=None, token=None, node=None, report_every_s=5, take_over=False,
//             defer_s=0)
// port < 0 serves no HTTP (the agent only pushes reports to `server`).
// Returns the bound port when this process took the role and started the agent; 0 when
// it waits for the role (take_over: another live process holds it, or defer_s > 0: it
// lets another rank take it first for that long); None after printing one line to stderr
// (port in use, role held and take_over false...).
PyObject* start_agent(PyObject* self, PyObject* args, PyObject* kwargs);
// Stops the agent (its last report goes out) or the wait for the role, and gives the role up.
PyObject* stop_agent(PyObject* self, PyObject* unused);
// "hosting", "waiting" or "none": what this process does about the node's agent.
PyObject* agent_role(PyObject* self, PyObject* unused);

}  // namespace trainwatch::python
