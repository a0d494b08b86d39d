// Stacks on a hang without a signal (docs/training.md, "Stacks on a hang"): one native
// thread, started at init(), waits in read() on a FIFO beside the rank's stack file,
//   TOP/<uid>/<job>.<pid>.stackreq
// and, for each request the agent writes there, appends a dump of every Python thread's
// stack to the stack file, then the end line agent::kStackDumpEnd. Nothing is delivered to the rank's
// threads, so a system call the rank is blocked in (a pause(), a read() on a socket, a futex) is never
// interrupted.
//
// The thread is not a Python thread: it sleeps in read() outside the interpreter and
// takes the GIL only for the dump itself (stack_sampler.cc says why), with CPython's own
// dump function, the one faulthandler uses.
//
// Fork: a child made by fork(2) has no sampler thread. An atfork child handler closes the
// child's copies of the FIFO and of the stack file, so the child never holds the parent's
// FIFO open and never answers for it; stop_stack_sampler in the child does nothing.
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

namespace trainwatch::python {

// _start_stack_sampler(fifo_path, stack_fd, group_writable) -> None when the thread runs,
// else a str saying why not (a Python whose private dump function is not known, a FIFO or
// thread that could not be made). Nothing is printed: the caller says it, once.
// stack_fd is the stack file, opened for appending; the sampler keeps its own copy.
PyObject* start_stack_sampler(PyObject* self, PyObject* const* args, Py_ssize_t nargs);
// _stop_stack_sampler(): removes the FIFO, wakes the thread and waits for it (at most one
// dump's time, the GIL let go meanwhile). Called at exit, before the interpreter is
// finalised.
PyObject* stop_stack_sampler(PyObject* self, PyObject* unused);

}  // namespace trainwatch::python
