# `seatrt template render` on one case: output byte-identical to the jinja2
# render; a template error exits non-zero naming the line.
set(case ${CASES}/cases/cli)
execute_process(
  COMMAND ${SEATRT} template render --template ${CASES}/gemma4_chat_template.jinja
          --messages ${case}/messages.json --tools ${case}/tools.json --kwargs @${case}/kwargs.json
          --tokenizer-config ${CASES}/../tokenizer/tokenizer_config.json
  OUTPUT_VARIABLE out RESULT_VARIABLE rc)
file(READ ${case}/expected.txt expected)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "seatrt template render failed (${rc})")
endif()
if(NOT out STREQUAL expected)
  message(FATAL_ERROR "render differs from jinja2:\n--- got\n${out}\n--- expected\n${expected}")
endif()

# A template that fails: raise_exception on string arguments (line 167... of the real template).
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/bad_messages.json
  "[{\"role\": \"user\", \"content\": \"x\"}, {\"role\": \"assistant\", \"tool_calls\": [{\"function\": {\"name\": \"f\", \"arguments\": \"{}\"}}]}]")
execute_process(
  COMMAND ${SEATRT} template render --template ${CASES}/gemma4_chat_template.jinja
          --messages ${CMAKE_CURRENT_BINARY_DIR}/bad_messages.json
  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(rc EQUAL 0)
  message(FATAL_ERROR "a raise_exception render exited 0")
endif()
if(NOT err MATCHES "gemma4_chat_template.jinja:[0-9]+: chat_template: tool_calls")
  message(FATAL_ERROR "error does not name the template line and message: ${err}")
endif()
