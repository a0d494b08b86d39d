# Every dependency comes from a Debian 12 package installed by scripts/setup.sh.
find_package(Threads REQUIRED)
find_package(Boost 1.81.0 EXACT REQUIRED CONFIG COMPONENTS json url)
find_package(CURL REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(SQLite3 REQUIRED)
find_package(SQLiteCpp REQUIRED)
find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)
find_package(CLI11 REQUIRED)

# Boost.Asio/Beast ship as headers; one definition set for all our targets. Their
# SEPARATE_COMPILATION mode: the functions they would otherwise define inline in every unit
# that includes them (the reactor, the scheduler, the HTTP parser) are compiled once, in
# src/core/boost_compiled.cc (and Asio's TLS in src/net/asio_ssl_compiled.cc, beside
# OpenSSL), instead of in each of some fifty units.
add_library(trainwatch_boost INTERFACE)
target_link_libraries(trainwatch_boost INTERFACE Boost::headers Boost::json Boost::url Threads::Threads)
target_compile_definitions(trainwatch_boost INTERFACE
  BOOST_ASIO_NO_DEPRECATED BOOST_BEAST_USE_STD_STRING_VIEW
  BOOST_ASIO_SEPARATE_COMPILATION BOOST_BEAST_SEPARATE_COMPILATION)

# libpqxx 6.4 ships no CMake package on Debian 12: pkg-config finds it (and libpq).
find_package(PkgConfig REQUIRED)
pkg_check_modules(PQXX REQUIRED IMPORTED_TARGET libpqxx>=6.4)
# libsodium (libsodium-dev): Argon2id for users' passwords (auth/password_hash.h).
pkg_check_modules(SODIUM REQUIRED IMPORTED_TARGET libsodium)

# cctz (libcctz-dev) ships neither a CMake package nor a pkg-config file on Debian 12.
find_path(CCTZ_INCLUDE_DIR cctz/time_zone.h REQUIRED)
find_library(CCTZ_LIBRARY cctz REQUIRED)
add_library(trainwatch_cctz INTERFACE)
target_include_directories(trainwatch_cctz SYSTEM INTERFACE ${CCTZ_INCLUDE_DIR})
target_link_libraries(trainwatch_cctz INTERFACE ${CCTZ_LIBRARY})
