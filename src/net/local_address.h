// Whether an address a connection is about to reach is on this host: loopback
// (127.0.0.0/8, ::1), link-local (169.254.0.0/16, fe80::/10: the cloud metadata services
// live there), unspecified (0.0.0.0, ::, which reach this host), or one of the addresses
// of this host's own interfaces (getifaddrs, read at each call: addresses change). An IPv6
// address that maps or embeds an IPv4 one (::ffff:127.0.0.1) is judged as that address.
//
// What for: notification channels must not become a way to reach services that listen
// only for this host (the server's own API, a database, a metadata service), unless an
// admin allows it (server.allow_local_channel_targets; alerting/transport.h). The check
// runs on the address curl is about to connect to, after name resolution, so a host name
// that resolves to 127.0.0.1 is caught as surely as the literal.
#pragma once

#include <sys/socket.h>

#include <optional>
#include <string>

namespace trainwatch::net {

// Why `address` is on this host ("127.0.0.1 is a loopback address", "10.0.0.5 is an
// address of this host"), or nullopt when it is elsewhere. Families other than IPv4 and
// IPv6 are on this host (a Unix socket).
std::optional<std::string> local_address(const sockaddr* address);

}  // namespace trainwatch::net
