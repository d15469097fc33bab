# The verification testbench (testbench/), SystemC-free, one binary:
#   reduction.testbench.TestbenchDirected.*      the directed suite on rtl, model and both, and its
#                                                hand-worked results against host arithmetic
#   reduction.testbench.TestbenchRtlRegression.* the random regression through the RTL against the
#                                                model: 4 fixed seeds x 1.2 M contribution beats
#   reduction.testbench.TestbenchScoreboard.*    a corrupted unit is caught, and named
#   reduction.testbench.VectorFile*/VectorCheck.* vector-file parsing and checking
# plus the rtl-check / rtl-verify command-line tests (testbench_cli.cmake).
file(GLOB NVSVP_TESTBENCH_TESTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/test_testbench*.cpp)
add_executable(nvsvp_testbench_tests ${NVSVP_TESTBENCH_TESTS})
# The host-arithmetic references must not contract a*b+c into one rounding (not that they multiply).
target_compile_options(nvsvp_testbench_tests PRIVATE -ffp-contract=off)
target_link_libraries(nvsvp_testbench_tests PRIVATE nvsvp_test_source_paths)  # NVSVP_SOURCE_DIR
target_link_libraries(nvsvp_testbench_tests PRIVATE nvsvp_testbench GTest::gtest GTest::gtest_main nvsvp_warnings)
gtest_discover_tests(nvsvp_testbench_tests TEST_PREFIX "reduction.testbench." DISCOVERY_TIMEOUT 60
  PROPERTIES TIMEOUT 60)

include(${CMAKE_CURRENT_LIST_DIR}/testbench_cli.cmake)
