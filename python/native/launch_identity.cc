#include "python/native/launch_identity.h"

#include <new>

#include "reporter/launch_env.h"

namespace trainwatch::python {
namespace {

// Steals `value`; false (with the Python error set) when it or the insertion failed.
bool put(PyObject* dict, const char* key, PyObject* value) {
  if (value == nullptr) return false;
  int rc = PyDict_SetItemString(dict, key, value);
  Py_DECREF(value);
  return rc == 0;
}

PyObject* number_or_none(const reporter::EnvNumber& n) {
  if (n.value) return PyLong_FromLongLong(*n.value);
  Py_RETURN_NONE;
}

PyObject* text(const std::string& s) {
  return PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace");
}

}  // namespace

PyObject* launch_env(PyObject*, PyObject*) {
  try {
    const reporter::LaunchEnv env = reporter::read_launch_env(reporter::process_env());
    PyObject* out = PyDict_New();
    if (out == nullptr) return nullptr;
    bool ok = put(out, "launcher", text(env.launcher)) && put(out, "run_id", text(env.run_id)) &&
              put(out, "node_name", text(env.node_name)) && put(out, "job", text(env.job)) &&
              put(out, "rank", number_or_none(env.rank)) &&
              put(out, "local_rank", number_or_none(env.local_rank)) &&
              put(out, "world_size", number_or_none(env.world_size)) &&
              put(out, "node_rank", number_or_none(env.node_rank)) &&
              put(out, "attempt", number_or_none(env.attempt));
    if (!ok) {
      Py_DECREF(out);
      return nullptr;
    }
    return out;
  } catch (const std::bad_alloc&) {
    return PyErr_NoMemory();
  }
}

}  // namespace trainwatch::python
