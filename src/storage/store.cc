#include "storage/store.h"

namespace trainwatch {

std::string_view to_string(DeliveryStatus s) {
  switch (s) {
    case DeliveryStatus::kPending: return "pending";
    case DeliveryStatus::kDelivered: return "delivered";
    case DeliveryStatus::kFailed: return "failed";
    case DeliveryStatus::kCancelled: return "cancelled";
  }
  return "pending";
}

std::optional<DeliveryStatus> delivery_status_from_string(std::string_view s) {
  for (auto status : {DeliveryStatus::kPending, DeliveryStatus::kDelivered, DeliveryStatus::kFailed,
                      DeliveryStatus::kCancelled}) {
    if (to_string(status) == s) return status;
  }
  return std::nullopt;
}

}  // namespace trainwatch
