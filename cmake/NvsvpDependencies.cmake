# All dependencies come from Debian packages (scripts/install_deps.sh installs them).
find_package(PkgConfig REQUIRED)
pkg_check_modules(SYSTEMC REQUIRED IMPORTED_TARGET systemc)
find_package(yaml-cpp REQUIRED)          # 0.7: the target is `yaml-cpp`
find_package(nlohmann_json REQUIRED)
find_package(CLI11 REQUIRED)
find_package(spdlog REQUIRED)           # per-component logs (nvsvp run --log)
find_package(GTest REQUIRED)
find_package(benchmark REQUIRED)
find_package(Threads REQUIRED)
find_package(verilator REQUIRED)        # verilate(): the reduction unit RTL (rtl/)

# SystemC as one imported target; its banner is silenced at run time by the binaries.
add_library(nvsvp_systemc INTERFACE)
target_link_libraries(nvsvp_systemc INTERFACE PkgConfig::SYSTEMC Threads::Threads)
# Under ASan every executable that runs SystemC carries the fix of SystemC's coroutine annotations
# (tests/sanitize/systemc_fiber_bounds.cpp says why).
if(NVSVP_SANITIZE)
  # In executables only: in a library's unity batch (make sanitize's build) it would be linked
  # along with the batch's other code and clash with the executable's copy.
  target_sources(nvsvp_systemc INTERFACE
    $<$<STREQUAL:$<TARGET_PROPERTY:TYPE>,EXECUTABLE>:${PROJECT_SOURCE_DIR}/tests/sanitize/systemc_fiber_bounds.cpp>)
  target_link_libraries(nvsvp_systemc INTERFACE ${CMAKE_DL_LIBS})
  target_link_options(nvsvp_systemc INTERFACE
    -Wl,--export-dynamic-symbol=__sanitizer_start_switch_fiber
    -Wl,--export-dynamic-symbol=_ZN7sc_core13sc_cor_pkg_qt5abortEPNS_6sc_corE)
endif()
