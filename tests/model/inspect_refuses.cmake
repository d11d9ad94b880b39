# `seatrt inspect BROKEN --against GOOD` must exit non-zero, name a router
# module in its refusal, and list the router entries the broken checkpoint's
# ignore list lacks (the positive-control diff).
execute_process(COMMAND ${SEATRT} inspect ${MODEL} --against ${AGAINST} --plugin-path ${PLUGINS}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(rc EQUAL 0)
  message(FATAL_ERROR "seatrt inspect accepted a checkpoint with quantized routers")
endif()
if(NOT err MATCHES "model\\.language_model\\.layers\\.0\\.router\\.proj")
  message(FATAL_ERROR "the refusal does not name a router module")
endif()
if(NOT out MATCHES "guard: REFUSED" OR NOT out MATCHES "\\+ model\\.language_model\\.layers\\.0\\.router\\.proj")
  message(FATAL_ERROR "inspect output lacks the guard verdict or the ignore-list diff")
endif()
# The good checkpoint passes (exit 0).
execute_process(COMMAND ${SEATRT} inspect ${AGAINST} --plugin-path ${PLUGINS} RESULT_VARIABLE rc_good
  OUTPUT_VARIABLE out_good ERROR_VARIABLE err_good)
if(NOT rc_good EQUAL 0 OR NOT out_good MATCHES "expert_linears: 144")
  message(FATAL_ERROR "seatrt inspect on the good fixture: rc ${rc_good}\n${out_good}${err_good}")
endif()
