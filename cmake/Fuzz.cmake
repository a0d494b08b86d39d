# TRAINWATCH_FUZZ=ON: a build folder of its own (scripts/fuzz.sh uses build-fuzz) compiled
# with clang-15, where every component library is instrumented for libFuzzer's coverage
# and checked by ASan and UBSan, and fuzz/ adds one fuzzer executable per target. The
# normal gcc builds never see any of this (the option defaults OFF).
if(NOT TRAINWATCH_FUZZ)
  return()
endif()
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "TRAINWATCH_FUZZ needs clang (libFuzzer): configure with CC=clang-15 CXX=clang++-15")
endif()
if(TRAINWATCH_SANITIZE)
  message(FATAL_ERROR "TRAINWATCH_FUZZ already builds with ASan and UBSan; leave TRAINWATCH_SANITIZE off")
endif()
# fuzzer-no-link: coverage instrumentation without libFuzzer's main, so the libraries
# stay linkable into anything; only the fuzzers link -fsanitize=fuzzer (fuzz/CMakeLists.txt).
# UBSan aborts on the first report, so that a fuzzer counts it as a crash.
# -gline-tables-only: a crash's stack needs no more, and the build is faster.
add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
                    -fno-sanitize-recover=undefined -gline-tables-only)
add_link_options(-fsanitize=address,undefined)
