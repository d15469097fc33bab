# The fuzz build (-DNVSVP_FUZZ=ON, clang only; scripts/fuzz.sh, `make fuzz`): every nvsvp target
# is compiled with libFuzzer's coverage instrumentation and AddressSanitizer + UndefinedBehavior-
# Sanitizer, any UB report aborting; the harnesses in tests/fuzz/ link libFuzzer's main.
option(NVSVP_FUZZ "Build the libFuzzer harnesses with sanitizers (clang)" OFF)
if(NVSVP_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "NVSVP_FUZZ=ON needs clang (CXX=clang++), not ${CMAKE_CXX_COMPILER_ID}")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer -g)
  add_link_options(-fsanitize=address,undefined)
endif()
