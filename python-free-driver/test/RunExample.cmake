# Runs the C example on a model without a tokenizer and checks what it says:
#   cmake -DEXAMPLE=<exe> -DMODEL=<model.onnx> -DPLAN=<out.plan> -P RunExample.cmake
file(REMOVE ${PLAN})
execute_process(COMMAND ${EXAMPLE} ${MODEL} ${PLAN} "unused prompt" 4
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the example exited with ${rc}")
endif()
if(NOT EXISTS ${PLAN})
  message(FATAL_ERROR "the example did not write ${PLAN}")
endif()
foreach(expected
    "compiled .*model.onnx -> "
    "vocabulary 256, context [0-9]+ tokens, no tokenizer"
    "position 0: token 11 -> argmax [0-9]+"
    "position 5: token [0-9]+ -> argmax [0-9]+"
    "the plan has no tokenizer"
    "generated ids: [0-9]+ [0-9]+ [0-9]+ [0-9]+\n")
  if(NOT out MATCHES "${expected}")
    message(FATAL_ERROR "the example's output does not match '${expected}'")
  endif()
endforeach()
file(REMOVE ${PLAN})
