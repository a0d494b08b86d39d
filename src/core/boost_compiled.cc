// The definitions of Boost.Asio and Beast, compiled once for every target (their
// SEPARATE_COMPILATION mode, cmake/Dependencies.cmake): every other unit includes only their
// declarations and templates.
#include <boost/asio/impl/src.hpp>
#include <boost/beast/src.hpp>
