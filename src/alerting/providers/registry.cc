// The table of provider types: the `type:` values a channel may have.
#include "alerting/providers/providers.h"

namespace trainwatch::alerting {

namespace {
constexpr ProviderType kProviderTypes[] = {
    {"slack", make_slack}, {"discord", make_discord},     {"webhook", make_webhook},
    {"email", make_email}, {"pagerduty", make_pagerduty}, {"alertmanager", make_alertmanager},
    {"ntfy", make_ntfy},   {"telegram", make_telegram},
};
}  // namespace

std::span<const ProviderType> provider_types() { return kProviderTypes; }

}  // namespace trainwatch::alerting
