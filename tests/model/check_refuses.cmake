# `seatrt check` on a seat whose model is the broken (router-quantized)
# fixture must exit non-zero naming a router module.  The seat file is the
# demo seat with its paths made absolute and its model swapped.
file(READ ${SOURCE_DIR}/configs/demo.toml seat)
string(REPLACE "../build/plugins" "${PLUGINS}" seat "${seat}")
string(REPLACE "\"../" "\"${SOURCE_DIR}/" seat "${seat}")
string(REPLACE "gemma4-tiny-moe" "gemma4-tiny-broken-router" seat "${seat}")
file(WRITE ${OUT}/broken_router_seat.toml "${seat}")
execute_process(COMMAND ${SEATRT} check ${OUT}/broken_router_seat.toml
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(rc EQUAL 0)
  message(FATAL_ERROR "seatrt check accepted a seat whose MoE has quantized routers")
endif()
if(NOT err MATCHES "router\\.proj" OR NOT err MATCHES "re:\\.\\*router")
  message(FATAL_ERROR "the refusal does not name a router module and the fix")
endif()
