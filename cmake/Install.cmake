# `cmake --install`: the layout an operator and a C/C++ user expect (GNUInstallDirs), the
# same one the Debian package ships (debian/):
#   bin/trainwatch, bin/trainwatch-agent        the server and the node agent
#   lib/libtrainwatch.so.1 (+ the .so link)     the reporting library, with
#   include/trainwatch/trainwatch.h{,pp}        its C header and C++ wrapper,
#   lib/pkgconfig/trainwatch.pc                 `pkg-config --cflags --libs trainwatch`,
#   lib/cmake/trainwatch/                       `find_package(trainwatch)` -> trainwatch::trainwatch
#   etc/trainwatch/trainwatch.yaml              the server's default config (/etc under /usr)
#   etc/trainwatch/agent/example.env            the agent template unit's environment file
#   share/trainwatch/examples/                  example configs
#   share/trainwatch/slurm/                     Slurm prolog and epilog for node agents
#   share/trainwatch/prometheus/                the Prometheus rules (and their promtool tests)
#   share/trainwatch/grafana/                   the Grafana dashboard
#   share/doc/trainwatch/                       README.md and docs/ (the pages and screenshots it links)
#   TRAINWATCH_SYSTEMD_UNIT_DIR                 trainwatch.service, trainwatch-agent@.service
# The units name the installed paths (configure_file), so a /usr/local install runs its own.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Every destination is relative to the prefix unless a packager names an absolute one, so
# that `cmake --install build --prefix P` keeps every file under P (an absolute path fixed
# at configure time would escape to /usr/local whatever P is).
# Debian 12 keeps packaged units in /lib/systemd/system (lintian: systemd-service-file-outside-lib);
# debian/rules passes that. Elsewhere systemd also reads <prefix>/lib/systemd/system for /usr.
set(TRAINWATCH_SYSTEMD_UNIT_DIR "lib/systemd/system"
    CACHE PATH "Where the systemd units are installed (relative: under the prefix)")
# A build folder configured before kept the old absolute default in its cache.
if(TRAINWATCH_SYSTEMD_UNIT_DIR STREQUAL "${CMAKE_INSTALL_PREFIX}/lib/systemd/system")
  set_property(CACHE TRAINWATCH_SYSTEMD_UNIT_DIR PROPERTY VALUE "lib/systemd/system")
endif()
# The config: PREFIX/etc, except /etc for the prefix /usr (GNUInstallDirs' FULL_SYSCONFDIR,
# which the units name); a packager's absolute CMAKE_INSTALL_SYSCONFDIR (debhelper's /etc) stays.
if(IS_ABSOLUTE "${CMAKE_INSTALL_SYSCONFDIR}" OR CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(trainwatch_sysconf_dir "${CMAKE_INSTALL_FULL_SYSCONFDIR}/trainwatch")
else()
  set(trainwatch_sysconf_dir "${CMAKE_INSTALL_SYSCONFDIR}/trainwatch")
endif()

install(TARGETS trainwatch RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET trainwatch-agent)
  install(TARGETS trainwatch-agent RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

set_target_properties(trainwatch_shared PROPERTIES EXPORT_NAME trainwatch)
install(TARGETS trainwatch_shared EXPORT trainwatchTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_COMPONENT dev
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/trainwatch DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)
set(cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/trainwatch)
install(EXPORT trainwatchTargets NAMESPACE trainwatch:: DESTINATION ${cmake_dir} COMPONENT dev)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/trainwatchConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/trainwatchConfig.cmake INSTALL_DESTINATION ${cmake_dir})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/trainwatchConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/trainwatchConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/trainwatchConfigVersion.cmake
  DESTINATION ${cmake_dir} COMPONENT dev)
configure_file(${PROJECT_SOURCE_DIR}/cmake/trainwatch.pc.in ${CMAKE_CURRENT_BINARY_DIR}/trainwatch.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/trainwatch.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)

install(FILES ${PROJECT_SOURCE_DIR}/deploy/config/trainwatch.yaml DESTINATION ${trainwatch_sysconf_dir})
install(FILES ${PROJECT_SOURCE_DIR}/deploy/config/example.env DESTINATION ${trainwatch_sysconf_dir}/agent)
install(FILES ${PROJECT_SOURCE_DIR}/examples/demo.yaml ${PROJECT_SOURCE_DIR}/deploy/config/trainwatch.yaml
  DESTINATION ${CMAKE_INSTALL_DATADIR}/trainwatch/examples)

foreach(unit trainwatch.service trainwatch-agent@.service)
  configure_file(${PROJECT_SOURCE_DIR}/deploy/systemd/${unit}.in ${CMAKE_CURRENT_BINARY_DIR}/systemd/${unit} @ONLY)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/systemd/${unit} DESTINATION ${TRAINWATCH_SYSTEMD_UNIT_DIR})
endforeach()

# What the README and the shipped config point to, so that an installed package has it.
install(FILES ${PROJECT_SOURCE_DIR}/deploy/prometheus/trainwatch.rules.yml
  ${PROJECT_SOURCE_DIR}/deploy/prometheus/trainwatch.rules.test.yml DESTINATION ${CMAKE_INSTALL_DATADIR}/trainwatch/prometheus)
install(FILES ${PROJECT_SOURCE_DIR}/deploy/grafana/trainwatch.json DESTINATION ${CMAKE_INSTALL_DATADIR}/trainwatch/grafana)
# README.md beside docs/ as in the repository, so that its links (docs/*.md, the
# screenshots) resolve where it is installed.
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
file(GLOB trainwatch_docs ${PROJECT_SOURCE_DIR}/docs/*.md ${PROJECT_SOURCE_DIR}/docs/*.png)
install(FILES ${trainwatch_docs} DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)

# Slurm Prolog=/Epilog= scripts that start and stop a node agent per job (docs/deploy.md).
install(PROGRAMS ${PROJECT_SOURCE_DIR}/deploy/slurm/prolog.sh ${PROJECT_SOURCE_DIR}/deploy/slurm/epilog.sh
  DESTINATION ${CMAKE_INSTALL_DATADIR}/trainwatch/slurm)
install(FILES ${PROJECT_SOURCE_DIR}/deploy/slurm/slurm-env.sh DESTINATION ${CMAKE_INSTALL_DATADIR}/trainwatch/slurm)
