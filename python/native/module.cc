// trainwatch._native: the CPython binding of libtrainwatch (and the in-process agent host).
// Calls are METH_FASTCALL so a step report costs one C call plus a few stores; the
// reporter is linked in statically (same code as libtrainwatch.so).
// The GIL is held in every function here; nothing blocks.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <string>

#include "python/native/agent_host.h"
#include "python/native/launch_identity.h"
#include "python/native/stack_sampler.h"
#include "reporter/slot_layout.h"
#include "trainwatch/trainwatch.h"

namespace {

struct HandleObject {
  PyObject_HEAD
  tw_handle* h;
  int open_status;
  long long ping_every;  // 0: no step pings
  long long ping_countdown;
  PyObject* on_ping;  // called with no arguments every ping_every steps
};

// Interned keyword names, compared by pointer first (CPython interns identifiers in calls).
PyObject* kw_loss;
PyObject* kw_loss_scale;
PyObject* kw_overflow;
PyObject* kw_grad_norm;
PyObject* kw_samples;
PyObject* kw_tokens;

bool same_name(PyObject* a, PyObject* b) { return a == b || PyUnicode_Compare(a, b) == 0; }

bool as_double(PyObject* o, double* out) {
  if (PyFloat_CheckExact(o)) {
    *out = PyFloat_AS_DOUBLE(o);
    return true;
  }
  *out = PyFloat_AsDouble(o);  // ints, numpy scalars, 0-d tensors (__float__)
  return !(*out == -1.0 && PyErr_Occurred());
}

bool as_u64(PyObject* o, uint64_t* out) {
  *out = PyLong_AsUnsignedLongLong(o);
  return !(*out == static_cast<uint64_t>(-1) && PyErr_Occurred());
}

int Handle_init(PyObject* self_obj, PyObject* args, PyObject* kwargs) {
  auto* self = reinterpret_cast<HandleObject*>(self_obj);
  static const char* kwlist[] = {"job",        "dir",         "rank",        "local_rank",
                                 "world_size", "master_addr", "master_port", nullptr};
  const char *job = nullptr, *dir = nullptr, *master_addr = nullptr;
  PyObject *rank = Py_None, *local_rank = Py_None, *world_size = Py_None;
  int master_port = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|zzOOOzi", const_cast<char**>(kwlist), &job, &dir, &rank,
                                   &local_rank, &world_size, &master_addr, &master_port)) {
    return -1;
  }
  tw_options o{};
  o.struct_size = sizeof o;
  o.job = job;
  o.dir = dir;
  o.master_addr = master_addr;
  o.master_port = master_port;
  if (rank != Py_None) {
    o.rank = static_cast<int32_t>(PyLong_AsLong(rank));
    o.rank_set = 1;
  }
  if (local_rank != Py_None) {
    o.local_rank = static_cast<int32_t>(PyLong_AsLong(local_rank));
    o.local_rank_set = 1;
  }
  if (world_size != Py_None) {
    o.world_size = static_cast<int32_t>(PyLong_AsLong(world_size));
    o.world_size_set = 1;
  }
  if (PyErr_Occurred()) return -1;
  if (self->h) tw_close(self->h);
  self->open_status = tw_open(&o, &self->h);  // never fails to give a handle; prints its own line
  return 0;
}

void Handle_dealloc(PyObject* self_obj) {
  auto* self = reinterpret_cast<HandleObject*>(self_obj);
  if (self->h) tw_close(self->h);
  Py_CLEAR(self->on_ping);
  Py_TYPE(self_obj)->tp_free(self_obj);
}

// step(step, *, loss=None, loss_scale=None, overflow=None, grad_norm=None, samples=None, tokens=None)
PyObject* Handle_step(PyObject* self_obj, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  auto* self = reinterpret_cast<HandleObject*>(self_obj);
  if (nargs != 1) {
    PyErr_SetString(PyExc_TypeError, "step() takes the step number as its one positional argument");
    return nullptr;
  }
  tw_step_info info;
  info.struct_size = sizeof info;
  info.fields = 0;
  info.step = PyLong_AsLongLong(args[0]);
  if (info.step == -1 && PyErr_Occurred()) return nullptr;
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t i = 0; i < nkw; ++i) {
    PyObject* name = PyTuple_GET_ITEM(kwnames, i);
    PyObject* value = args[nargs + i];
    if (value == Py_None) continue;
    bool ok = true;
    if (same_name(name, kw_loss)) {
      ok = as_double(value, &info.loss);
      info.fields |= TW_FIELD_LOSS;
    } else if (same_name(name, kw_loss_scale)) {
      ok = as_double(value, &info.loss_scale);
      info.fields |= TW_FIELD_LOSS_SCALE;
    } else if (same_name(name, kw_overflow)) {
      int truth = PyObject_IsTrue(value);
      ok = truth >= 0;
      info.overflow = truth > 0;
      info.fields |= TW_FIELD_OVERFLOW;
    } else if (same_name(name, kw_grad_norm)) {
      ok = as_double(value, &info.grad_norm);
      info.fields |= TW_FIELD_GRAD_NORM;
    } else if (same_name(name, kw_samples)) {
      ok = as_u64(value, &info.samples);
      info.fields |= TW_FIELD_SAMPLES;
    } else if (same_name(name, kw_tokens)) {
      ok = as_u64(value, &info.tokens);
      info.fields |= TW_FIELD_TOKENS;
    } else {
      PyErr_Format(PyExc_TypeError, "step() got an unexpected keyword argument '%U'", name);
      return nullptr;
    }
    if (!ok) return nullptr;
  }
  tw_step_ex(self->h, &info);
  if (self->ping_every > 0 && --self->ping_countdown <= 0) {
    self->ping_countdown = self->ping_every;
    if (self->on_ping) {
      // The callback only enqueues (see trainwatch.ping); a failure in it must not reach
      // the training loop.
      PyObject* r = PyObject_CallNoArgs(self->on_ping);
      if (r) {
        Py_DECREF(r);
      } else {
        PyErr_Clear();
      }
    }
  }
  Py_RETURN_NONE;
}

PyObject* Handle_set_step_ping(PyObject* self_obj, PyObject* const* args, Py_ssize_t nargs) {
  auto* self = reinterpret_cast<HandleObject*>(self_obj);
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "_set_step_ping(every, callback)");
    return nullptr;
  }
  long long every = PyLong_AsLongLong(args[0]);
  if (every == -1 && PyErr_Occurred()) return nullptr;
  self->ping_every = every;
  self->ping_countdown = every;
  Py_XSETREF(self->on_ping, args[1] == Py_None ? nullptr : Py_NewRef(args[1]));
  Py_RETURN_NONE;
}

PyObject* Handle_set_status(PyObject* self_obj, PyObject* const* args, Py_ssize_t nargs) {
  auto* self = reinterpret_cast<HandleObject*>(self_obj);
  if (nargs != 1) return PyErr_Format(PyExc_TypeError, "_set_status(code)");
  long code = PyLong_AsLong(args[0]);
  if (code == -1 && PyErr_Occurred()) return nullptr;
  if (tw_set_status(self->h, static_cast<tw_run_status>(code)) == TW_ERR_INVALID_ARGUMENT) {
    return PyErr_Format(PyExc_ValueError, "unknown status code %ld", code);
  }
  Py_RETURN_NONE;
}

PyObject* Handle_checkpoint_begin(PyObject* self_obj, PyObject* const* args, Py_ssize_t nargs) {
  auto* self = reinterpret_cast<HandleObject*>(self_obj);
  if (nargs != 2) return PyErr_Format(PyExc_TypeError, "_checkpoint_begin(step, path)");
  long long step = PyLong_AsLongLong(args[0]);
  if (step == -1 && PyErr_Occurred()) return nullptr;
  const char* path = args[1] == Py_None ? nullptr : PyUnicode_AsUTF8(args[1]);
  if (args[1] != Py_None && path == nullptr) return nullptr;
  tw_checkpoint_begin(self->h, step, path);
  Py_RETURN_NONE;
}

PyObject* Handle_checkpoint_end(PyObject* self_obj, PyObject* const* args, Py_ssize_t nargs) {
  auto* self = reinterpret_cast<HandleObject*>(self_obj);
  if (nargs != 2) return PyErr_Format(PyExc_TypeError, "_checkpoint_end(ok, bytes)");
  int ok = PyObject_IsTrue(args[0]);
  uint64_t bytes = 0;
  if (ok < 0 || !as_u64(args[1], &bytes)) return nullptr;
  tw_checkpoint_end(self->h, ok, bytes);
  Py_RETURN_NONE;
}

PyObject* Handle_error(PyObject* self_obj, PyObject* const* args, Py_ssize_t nargs) {
  auto* self = reinterpret_cast<HandleObject*>(self_obj);
  if (nargs != 1) return PyErr_Format(PyExc_TypeError, "_error(text)");
  const char* text = PyUnicode_AsUTF8(args[0]);
  if (!text) return nullptr;
  tw_error(self->h, text);
  Py_RETURN_NONE;
}

PyObject* Handle_gauge(PyObject* self_obj, PyObject* const* args, Py_ssize_t nargs) {
  auto* self = reinterpret_cast<HandleObject*>(self_obj);
  if (nargs != 2) return PyErr_Format(PyExc_TypeError, "gauge(name, value)");
  const char* name = PyUnicode_AsUTF8(args[0]);
  double value = 0;
  if (!name || !as_double(args[1], &value)) return nullptr;
  return PyBool_FromLong(tw_gauge(self->h, name, value) == TW_OK);
}

PyObject* Handle_colossal(PyObject* self_obj, PyObject* const* args, Py_ssize_t nargs) {
  // _colossal(pipeline_stage|None, add_oom_events, kernels_compiled|None)
  auto* self = reinterpret_cast<HandleObject*>(self_obj);
  if (nargs != 3) return PyErr_Format(PyExc_TypeError, "_colossal(stage, oom_events, kernels_compiled)");
  if (args[0] != Py_None) {
    long stage = PyLong_AsLong(args[0]);
    if (stage == -1 && PyErr_Occurred()) return nullptr;
    tw_set_pipeline_stage(self->h, static_cast<int32_t>(stage));
  }
  uint64_t oom = 0;
  if (!as_u64(args[1], &oom)) return nullptr;
  if (oom) tw_add_oom_events(self->h, oom);
  if (args[2] != Py_None) {
    int compiled = PyObject_IsTrue(args[2]);
    if (compiled < 0) return nullptr;
    tw_set_kernels_compiled(self->h, compiled);
  }
  Py_RETURN_NONE;
}

// _collective_begin(kind), _collective_end(), _set_phase(code): one atomic store or two each,
// called around every collective the module wraps (trainwatch/_collectives.py).
PyObject* Handle_collective_begin(PyObject* self_obj, PyObject* kind) {
  long code = PyLong_AsLong(kind);
  if (code == -1 && PyErr_Occurred()) return nullptr;
  tw_collective_begin(reinterpret_cast<HandleObject*>(self_obj)->h, static_cast<tw_collective>(code));
  Py_RETURN_NONE;
}

PyObject* Handle_collective_end(PyObject* self_obj, PyObject*) {
  tw_collective_end(reinterpret_cast<HandleObject*>(self_obj)->h);
  Py_RETURN_NONE;
}

PyObject* Handle_set_phase(PyObject* self_obj, PyObject* phase) {
  long code = PyLong_AsLong(phase);
  if (code == -1 && PyErr_Occurred()) return nullptr;
  if (tw_set_phase(reinterpret_cast<HandleObject*>(self_obj)->h, static_cast<tw_phase>(code)) ==
      TW_ERR_INVALID_ARGUMENT) {
    return PyErr_Format(PyExc_ValueError, "unknown phase code %ld", code);
  }
  Py_RETURN_NONE;
}

PyObject* Handle_get_enabled(PyObject* self_obj, void*) {
  return PyBool_FromLong(tw_is_enabled(reinterpret_cast<HandleObject*>(self_obj)->h));
}
PyObject* Handle_get_open_status(PyObject* self_obj, void*) {
  return PyLong_FromLong(reinterpret_cast<HandleObject*>(self_obj)->open_status);
}

PyMethodDef handle_methods[] = {
    {"step", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(Handle_step)),
     METH_FASTCALL | METH_KEYWORDS,
     "step(step, *, loss, loss_scale, overflow, grad_norm, samples, tokens): report one step"},
    {"_set_step_ping", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(Handle_set_step_ping)),
     METH_FASTCALL, nullptr},
    {"_set_status", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(Handle_set_status)),
     METH_FASTCALL, nullptr},
    {"_checkpoint_begin",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(Handle_checkpoint_begin)), METH_FASTCALL,
     nullptr},
    {"_checkpoint_end", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(Handle_checkpoint_end)),
     METH_FASTCALL, nullptr},
    {"_error", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(Handle_error)), METH_FASTCALL,
     nullptr},
    {"gauge", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(Handle_gauge)), METH_FASTCALL,
     "gauge(name, value) -> bool: set a named custom gauge (at most 8 names)"},
    {"_colossal", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(Handle_colossal)), METH_FASTCALL,
     nullptr},
    {"_collective_begin", Handle_collective_begin, METH_O, nullptr},
    {"_collective_end", Handle_collective_end, METH_NOARGS, nullptr},
    {"_set_phase", Handle_set_phase, METH_O, nullptr},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef handle_getset[] = {
    {"enabled", Handle_get_enabled, nullptr, "whether reports reach a slot", nullptr},
    {"open_status", Handle_get_open_status, nullptr, "tw_status of the open (0 = ok)", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyTypeObject HandleType = {PyVarObject_HEAD_INIT(nullptr, 0)};

PyMethodDef module_methods[] = {
    {"start_agent",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(trainwatch::python::start_agent)),
     METH_VARARGS | METH_KEYWORDS,
     "start_agent(job, dir, host, port, ...) -> port or None: the node agent on C++ threads"},
    {"stop_agent", trainwatch::python::stop_agent, METH_NOARGS,
     "stop_agent(): stop the in-process agent (or the wait for its role) and give the role up"},
    {"agent_role", trainwatch::python::agent_role, METH_NOARGS,
     "agent_role() -> 'hosting' | 'waiting' | 'none': this process's part in the node's agent"},
    {"launch_env", trainwatch::python::launch_env, METH_NOARGS,
     "launch_env() -> dict: rank place and run identity from the launcher's variables"},
    {"_start_stack_sampler",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(trainwatch::python::start_stack_sampler)),
     METH_FASTCALL, "_start_stack_sampler(fifo_path, stack_fd, group_writable) -> None or why not"},
    {"_stop_stack_sampler", trainwatch::python::stop_stack_sampler, METH_NOARGS,
     "_stop_stack_sampler(): remove the request FIFO and end the sampler thread"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module_def = {PyModuleDef_HEAD_INIT,
                          "trainwatch._native",
                          "The C binding of libtrainwatch; use the trainwatch package.",
                          -1,
                          module_methods,
                          nullptr,
                          nullptr,
                          nullptr,
                          nullptr};

// RANK_STATUSES: {word: number} from the one table of a rank's status words, so that
// status() takes exactly the words the agent and the server use.
bool add_rank_statuses(PyObject* m) {
  PyObject* statuses = PyDict_New();
  if (!statuses) return false;
  for (const auto& [status, word] : trainwatch::reporter::kRankStatusNames) {
    PyObject* number = PyLong_FromUnsignedLong(static_cast<uint32_t>(status));
    const int rc = number ? PyDict_SetItemString(statuses, std::string(word).c_str(), number) : -1;
    Py_XDECREF(number);
    if (rc < 0) {
      Py_DECREF(statuses);
      return false;
    }
  }
  const int rc = PyModule_AddObjectRef(m, "RANK_STATUSES", statuses);
  Py_DECREF(statuses);
  return rc == 0;
}

}  // namespace

PyMODINIT_FUNC PyInit__native(void) {
  HandleType.tp_name = "trainwatch._native.Handle";
  HandleType.tp_basicsize = sizeof(HandleObject);
  HandleType.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE;
  HandleType.tp_doc = "One rank's slot. Use trainwatch.init().";
  HandleType.tp_new = PyType_GenericNew;
  HandleType.tp_init = Handle_init;
  HandleType.tp_dealloc = Handle_dealloc;
  HandleType.tp_methods = handle_methods;
  HandleType.tp_getset = handle_getset;
  if (PyType_Ready(&HandleType) < 0) return nullptr;
  kw_loss = PyUnicode_InternFromString("loss");
  kw_loss_scale = PyUnicode_InternFromString("loss_scale");
  kw_overflow = PyUnicode_InternFromString("overflow");
  kw_grad_norm = PyUnicode_InternFromString("grad_norm");
  kw_samples = PyUnicode_InternFromString("samples");
  kw_tokens = PyUnicode_InternFromString("tokens");
  PyObject* m = PyModule_Create(&module_def);
  if (!m) return nullptr;
  if (PyModule_AddObjectRef(m, "Handle", reinterpret_cast<PyObject*>(&HandleType)) < 0) return nullptr;
  struct {
    const char* name;
    long value;
  } constants[] = {{"STATUS_INITIALIZING", TW_STATUS_INITIALIZING},
                   {"STATUS_TRAINING", TW_STATUS_TRAINING},
                   {"STATUS_CHECKPOINTING", TW_STATUS_CHECKPOINTING},
                   {"STATUS_EVALUATING", TW_STATUS_EVALUATING},
                   {"STATUS_FINISHED", TW_STATUS_FINISHED},
                   {"STATUS_FAILED", TW_STATUS_FAILED},
                   {"PHASE_TRAIN", TW_PHASE_TRAIN},
                   {"PHASE_EVAL", TW_PHASE_EVAL},
                   {"PHASE_WARMUP", TW_PHASE_WARMUP}};
  for (const auto& c : constants) {
    if (PyModule_AddIntConstant(m, c.name, c.value) < 0) return nullptr;
  }
  return add_rank_statuses(m) ? m : nullptr;
}
