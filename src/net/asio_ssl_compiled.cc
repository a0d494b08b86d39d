// The definitions of Boost.Asio's TLS streams, compiled once (SEPARATE_COMPILATION,
// cmake/Dependencies.cmake), here because this component links OpenSSL.
#include <boost/asio/ssl/impl/src.hpp>
