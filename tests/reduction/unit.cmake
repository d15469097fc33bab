# The reduction unit and its backends (issue 3): the model against hand-worked results, the
# backend factory and its comparison, the Verilated RTL against the model. SystemC-free, so the
# tests share one binary.
file(GLOB NVSVP_REDUCTION_UNIT_TESTS CONFIGURE_DEPENDS
  ${CMAKE_CURRENT_SOURCE_DIR}/test_reduction_unit*.cpp)
add_executable(nvsvp_reduction_unit_tests ${NVSVP_REDUCTION_UNIT_TESTS})
target_link_libraries(nvsvp_reduction_unit_tests PRIVATE
  nvsvp_reduction GTest::gtest GTest::gtest_main nvsvp_warnings)
gtest_discover_tests(nvsvp_reduction_unit_tests TEST_PREFIX "reduction.unit." DISCOVERY_TIMEOUT 60
  PROPERTIES TIMEOUT 60)
