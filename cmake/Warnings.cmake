# Warnings for every target of ours; errors in CI (TRAINWATCH_WERROR=ON). Not
# -Wnull-dereference: at -O2 GCC 12 raises it inside libstdc++ stream code.
add_library(trainwatch_warnings INTERFACE)
target_compile_options(trainwatch_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast
  -Wcast-align -Woverloaded-virtual -Wimplicit-fallthrough
  $<$<BOOL:${TRAINWATCH_WERROR}>:-Werror>)

string(TOLOWER "${TRAINWATCH_SANITIZE}" sanitize)
# Sanitizer builds find bugs, they are not measured: -O1 (what both sanitizers' authors
# suggest) and line tables only (-g1, all a report's stack needs). Placed after the build
# type's -O2 -g, they win, and the test command's two extra builds compile faster.
set(sanitizer_optimization -O1 -g1)
if(sanitize STREQUAL "thread")
  # ThreadSanitizer cannot be combined with ASan; every target of the build, the tests and
  # the binary included, is instrumented (an uninstrumented library hides its races).
  # -Wno-tsan: GCC warns that TSan does not model std::atomic_thread_fence, which the
  # reporter's seqlock uses (src/reporter/handle.h, slot_reader.cc); its readers check a
  # sequence number and its tests run writer and reader in one thread or through atomics.
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer $<$<CXX_COMPILER_ID:GNU>:-Wno-tsan>
                      ${sanitizer_optimization})
  add_link_options(-fsanitize=thread)
elseif(sanitize STREQUAL "address" OR TRAINWATCH_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
                      ${sanitizer_optimization})
  add_link_options(-fsanitize=address,undefined)
endif()

# A component library: trainwatch_<name>, aliased trainwatch::<name>.
function(trainwatch_component name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(trainwatch_${name} STATIC ${ARG_SOURCES})
  add_library(trainwatch::${name} ALIAS trainwatch_${name})
  target_include_directories(trainwatch_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/include)
  target_link_libraries(trainwatch_${name} PUBLIC ${ARG_DEPS} PRIVATE trainwatch_warnings)
endfunction()
