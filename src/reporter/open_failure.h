// What tw_open says when opening the slot threw (reporter.cc). Only std::bad_alloc is out
// of memory; anything else is named by its what(), so a bug or a failing system call is
// not reported as memory pressure.
#pragma once

#include <exception>
#include <new>
#include <string>

namespace trainwatch::reporter {

// Call only inside a catch block: it names the exception being handled.
inline std::string open_failure_reason() {
  try {
    throw;
  } catch (const std::bad_alloc&) {
    return "out of memory while opening the slot";
  } catch (const std::exception& e) {
    return std::string("cannot open the slot: ") + e.what();
  } catch (...) {
    return "cannot open the slot: an unknown exception was thrown";
  }
}

}  // namespace trainwatch::reporter
