#include "storage/store.h"

#include "core/enum_names.h"

namespace trainwatch {

namespace {

constexpr EnumNames<DeliveryStatus, 4> kDeliveryStatusNames{{{DeliveryStatus::kPending, "pending"},
                                                             {DeliveryStatus::kDelivered, "delivered"},
                                                             {DeliveryStatus::kFailed, "failed"},
                                                             {DeliveryStatus::kCancelled, "cancelled"}}};

}  // namespace

std::string_view to_string(DeliveryStatus s) { return name_of(kDeliveryStatusNames, s); }

std::optional<DeliveryStatus> delivery_status_from_string(std::string_view s) {
  return value_of(kDeliveryStatusNames, s);
}

}  // namespace trainwatch
