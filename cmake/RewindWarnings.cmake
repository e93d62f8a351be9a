# rewind_target_warnings(target): the project's warning set, applied per target.
function(rewind_target_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    # -Wno-missing-field-initializers: the project's aggregates give every field a default,
    # and GCC 12 warns for a brace list that leaves a defaulted field out (a field added to
    # a message at the end, optional on the wire, would otherwise touch every use).
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wno-unused-parameter
                                             -Wno-missing-field-initializers)
    if(REWIND_WARNINGS_AS_ERRORS)
      target_compile_options(${target} PRIVATE -Werror)
    endif()
  endif()
endfunction()
