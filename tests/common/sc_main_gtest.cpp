// libsystemc.so defines main(), so every test binary enters through sc_main. A SystemC warning or
// error during a test is turned into a test failure.
#include <gtest/gtest.h>
#include <systemc>

namespace {

// SystemC prints its banner before sc_main runs; a static initializer comes earlier still.
const bool kBannerOff = (setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0), true);

void report_to_gtest(const sc_core::sc_report& report, const sc_core::sc_actions& actions) {
  if (report.get_severity() >= sc_core::SC_WARNING) {
    ADD_FAILURE() << "SystemC " << (report.get_severity() == sc_core::SC_WARNING ? "warning" : "error")
                  << ": " << report.get_msg_type() << ": " << report.get_msg();
  }
  if (actions & sc_core::SC_THROW) throw report;
}

}  // namespace

int sc_main(int argc, char* argv[]) {
  ::testing::InitGoogleTest(&argc, argv);
  sc_core::sc_report_handler::set_handler(report_to_gtest);
  return RUN_ALL_TESTS();
}
