# rewind_find_libfuzzer(VAR): sets VAR to a clang++ that compiles AND links
# -fsanitize=fuzzer,address,undefined (Debian: clang-14 + libfuzzer-14-dev), else to
# "" with a status line saying what is missing. The probe links a one-line fuzz target
# (again until it succeeds, then cached per clang), so a clang without libFuzzer's runtime
# (lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a) is found out at configure time.
function(rewind_find_libfuzzer var)
  find_program(REWIND_CLANGXX NAMES clang++-14 clang++ DOC "clang++ for the libFuzzer targets")
  if(NOT REWIND_CLANGXX)
    message(STATUS "libFuzzer: no clang++-14 found: the fuzz tests are NOT added (apt install clang-14 libfuzzer-14-dev)")
    set(${var} "" PARENT_SCOPE)
    return()
  endif()
  if(NOT REWIND_LIBFUZZER_OK OR NOT REWIND_LIBFUZZER_PROBED STREQUAL REWIND_CLANGXX)
    set(dir ${CMAKE_BINARY_DIR}/CMakeFiles/libfuzzer-probe)
    file(MAKE_DIRECTORY ${dir})
    file(WRITE ${dir}/probe.cpp
      "#include <cstddef>\n#include <cstdint>\nextern \"C\" int LLVMFuzzerTestOneInput(const std::uint8_t*, std::size_t) { return 0; }\n")
    execute_process(COMMAND ${REWIND_CLANGXX} -fsanitize=fuzzer,address,undefined ${dir}/probe.cpp -o ${dir}/probe
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
    if(rc EQUAL 0)
      set(ok TRUE)
    else()
      set(ok FALSE)
    endif()
    set(REWIND_LIBFUZZER_OK ${ok} CACHE INTERNAL "clang++ links -fsanitize=fuzzer")
    set(REWIND_LIBFUZZER_PROBED ${REWIND_CLANGXX} CACHE INTERNAL "the clang++ probed")
  endif()
  if(REWIND_LIBFUZZER_OK)
    message(STATUS "libFuzzer: ${REWIND_CLANGXX} links -fsanitize=fuzzer: the fuzz tests run (ctest -L fuzz)")
    set(${var} ${REWIND_CLANGXX} PARENT_SCOPE)
  else()
    message(STATUS "libFuzzer: ${REWIND_CLANGXX} cannot link -fsanitize=fuzzer: the fuzz tests are NOT added "
                   "(apt install libfuzzer-14-dev)")
    set(${var} "" PARENT_SCOPE)
  endif()
endfunction()
