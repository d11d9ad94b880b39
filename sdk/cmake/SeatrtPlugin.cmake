# seatrt_add_plugin(<target> SOURCES <files...>)
# Builds a seatrt plugin: a MODULE library that exports only
# seatrt_plugin_init (hidden visibility + the SDK's linker version script),
# links nothing of the host, and whose file is named lib<target>.so.
include_guard(GLOBAL)
set(SEATRT_PLUGIN_MAP "${CMAKE_CURRENT_LIST_DIR}/seatrt_plugin.map" CACHE INTERNAL "")

function(seatrt_add_plugin target)
  cmake_parse_arguments(ARG "" "" "SOURCES" ${ARGN})
  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE seatrt::sdk)
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    CXX_VISIBILITY_PRESET hidden
    C_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    POSITION_INDEPENDENT_CODE ON
    LINK_DEPENDS "${SEATRT_PLUGIN_MAP}")
  target_link_options(${target} PRIVATE
    "LINKER:--version-script=${SEATRT_PLUGIN_MAP}" "LINKER:--no-undefined")
endfunction()
