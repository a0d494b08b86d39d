// Random: where trainwatch gets unpredictable bytes (heartbeat tokens). Injected like the
// Clock so tests can fix the bytes. Thread-safety: implementations must be safe to call
// from any thread.
#pragma once

#include <cstdint>
#include <mutex>
#include <random>
#include <span>

namespace trainwatch {

class Random {
 public:
  virtual ~Random() = default;
  virtual void fill(std::span<uint8_t> out) = 0;
};

// The operating system's generator (getrandom(2) behind std::random_device on Linux).
class SystemRandom final : public Random {
 public:
  void fill(std::span<uint8_t> out) override {
    std::lock_guard lock(mu_);
    for (auto& b : out) b = static_cast<uint8_t>(device_());
  }

 private:
  std::mutex mu_;
  std::random_device device_;
};

}  // namespace trainwatch
