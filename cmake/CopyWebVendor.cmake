# Run as a script (cmake -P) at build time: copies each file of FILES ("|"-separated), the
# third-party browser code that scripts/setup.sh fetched (scripts/fetch_web_vendor.sh) into
# src/web/npm/node_modules, into DESTINATION for embedding. Never fetches anything itself.
cmake_minimum_required(VERSION 3.25)
string(REPLACE "|" ";" files "${FILES}")
foreach(file IN LISTS files)
  if(NOT EXISTS "${file}")
    message(FATAL_ERROR "${file} is missing: run `bash scripts/setup.sh build`, which fetches the "
                        "dashboard's uPlot as src/web/npm/package-lock.json pins it (once, with the network)")
  endif()
  get_filename_component(name "${file}" NAME)
  file(MAKE_DIRECTORY "${DESTINATION}")
  file(COPY_FILE "${file}" "${DESTINATION}/${name}")
  # npm's tarballs date their files 1985: a copy dated now is newer than its inputs, so it counts
  # as done until they change.
  file(TOUCH_NOCREATE "${DESTINATION}/${name}")
endforeach()
