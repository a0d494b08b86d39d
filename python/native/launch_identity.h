// trainwatch._native.launch_env(): what the launcher's variables say about this rank, read by
// the same code as the reporter's (src/reporter/launch_env.h), so the Python side decides
// "am I rank 0, local rank 0" exactly as the slot says.
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

namespace trainwatch::python {

// launch_env() -> dict: launcher, run_id, node_name (str, "" when unknown); rank, local_rank,
// world_size, node_rank, attempt (int, or None when no variable gives a number).
PyObject* launch_env(PyObject* self, PyObject* unused);

}  // namespace trainwatch::python
