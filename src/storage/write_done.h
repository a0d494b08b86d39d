// How a queued write (Store::write, storage/store.h) says it committed or failed: a header of
// its own so that who only passes the callback along (heartbeat/ping_sink.h) needs no more.
#pragma once

#include <functional>

#include "core/result.h"

namespace trainwatch {

// Called on the writer thread after the operation's transaction; keep it short.
using WriteDone = std::function<void(const Status&)>;

}  // namespace trainwatch
