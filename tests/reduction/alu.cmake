# The arithmetic of the reduction unit: rtl/reduce_alu.sv and its bit-exact C++ twin
# tlm_models/src/reduction/reduce_alu.cpp.
#   reduction.alu.*      the C++ ALU against independent references (host float, _Float16, ...)
#   reduction.alu_rtl.*  the Verilated RTL ALU against the C++ ALU
#   reduction.alu_lint   verilator --lint-only -Wall on the ALU RTL

# The C++ ALU: from nvsvp_reduction when tlm_models provides it, otherwise compiled here.
if(TARGET nvsvp_reduction)
  set(NVSVP_ALU_MODEL nvsvp_reduction)
else()
  add_library(nvsvp_reduce_alu_local STATIC ${PROJECT_SOURCE_DIR}/tlm_models/src/reduction/reduce_alu.cpp)
  target_include_directories(nvsvp_reduce_alu_local PUBLIC ${PROJECT_SOURCE_DIR}/tlm_models/include)
  target_link_libraries(nvsvp_reduce_alu_local PRIVATE nvsvp_warnings)
  set(NVSVP_ALU_MODEL nvsvp_reduce_alu_local)
endif()

# The references use the host FPU: no fused multiply-add contraction, IEEE semantics.
add_executable(nvsvp_reduce_alu_tests ${CMAKE_CURRENT_SOURCE_DIR}/test_reduce_alu.cpp)
target_compile_options(nvsvp_reduce_alu_tests PRIVATE -ffp-contract=off)
target_link_libraries(nvsvp_reduce_alu_tests PRIVATE ${NVSVP_ALU_MODEL} GTest::gtest_main nvsvp_warnings)
gtest_discover_tests(nvsvp_reduce_alu_tests TEST_PREFIX "reduction.alu." DISCOVERY_TIMEOUT 60
  PROPERTIES TIMEOUT 60)

# The RTL ALU, Verilated with a test top of its own. -Wall keeps the SV honest (the lint test below
# fails on any warning); -Wno-fatal only keeps a warning from breaking this C++ build.
find_package(verilator REQUIRED)
set(NVSVP_ALU_RTL ${PROJECT_SOURCE_DIR}/rtl/reduce_pkg.sv ${PROJECT_SOURCE_DIR}/rtl/reduce_alu.sv
    ${CMAKE_CURRENT_SOURCE_DIR}/alu_harness.sv)
add_library(nvsvp_reduce_alu_harness STATIC)
verilate(nvsvp_reduce_alu_harness PREFIX Valu_harness TOP_MODULE alu_harness SOURCES ${NVSVP_ALU_RTL}
  VERILATOR_ARGS -Wall -Wno-fatal OPT_FAST -O2)

# The C++ ALU is compiled in from its source rather than taken from nvsvp_reduction, which brings
# the unit's Verilated library and a second copy of the Verilator runtime.
add_executable(nvsvp_reduce_alu_rtl_tests ${CMAKE_CURRENT_SOURCE_DIR}/test_reduce_alu_rtl.cpp
  ${PROJECT_SOURCE_DIR}/tlm_models/src/reduction/reduce_alu.cpp)
target_include_directories(nvsvp_reduce_alu_rtl_tests PRIVATE ${PROJECT_SOURCE_DIR}/tlm_models/include)
target_link_libraries(nvsvp_reduce_alu_rtl_tests PRIVATE nvsvp_reduce_alu_harness GTest::gtest_main
  nvsvp_warnings)
gtest_discover_tests(nvsvp_reduce_alu_rtl_tests TEST_PREFIX "reduction.alu_rtl." DISCOVERY_TIMEOUT 60
  PROPERTIES TIMEOUT 60)

add_test(NAME reduction.alu_lint
  COMMAND ${VERILATOR_BIN} --lint-only -Wall --top-module alu_harness ${NVSVP_ALU_RTL})
set_tests_properties(reduction.alu_lint PROPERTIES TIMEOUT 60)
