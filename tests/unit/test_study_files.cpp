// The study files of configs/studies/ and what scripts/run_studies.sh does with them: every one
// is run by the script (it globbed none before issue 19: platforms and topk_dgx_h100 were missing
// from its list), loads, and its committed CSV in docs/study_results/ has the header study.cpp
// writes today. And `nvsvp packet-efficiency`'s table, from the packet formats.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "../common/source_paths.hpp"
#include "nvsvp/platform/packet_efficiency.hpp"
#include "nvsvp/platform/study.hpp"

namespace nvsvp::platform {
namespace {

namespace fs = std::filesystem;

const std::string kSource = NVSVP_SOURCE_DIR;

std::vector<std::string> study_names() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(kSource + "/configs/studies")) {
    if (entry.path().extension() == ".yaml") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string text_of(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(StudyFiles, RunStudiesRunsEveryStudyAndCopiesItsCsv) {
  const std::string script = text_of(kSource + "/scripts/run_studies.sh");
  // Either it globs the directory or it names every study.
  const bool globs = script.find("configs/studies/*.yaml") != std::string::npos;
  for (const std::string& name : study_names()) {
    EXPECT_TRUE(globs || script.find(name) != std::string::npos) << name << " is not run by scripts/run_studies.sh";
  }
  EXPECT_NE(script.find("docs/study_results/$study.csv"), std::string::npos)
      << "scripts/run_studies.sh does not copy each study.csv to docs/study_results/";
}

TEST(StudyFiles, EveryStudyLoadsAndSaysWhatItReproduces) {
  for (const std::string& name : study_names()) {
    const std::string file = kSource + "/configs/studies/" + name + ".yaml";
    EXPECT_EQ(text_of(file).rfind("# ", 0), 0u) << name << " has no header comment";
    EXPECT_NO_THROW(load_study(file, {}, kSource + "/configs")) << name;
  }
}

// The committed CSVs are what scripts/run_studies.sh makes: every study has one, with the columns
// the current study.cpp writes.
TEST(StudyFiles, EveryStudyHasACommittedCsvWithTheCurrentHeader) {
  for (const std::string& name : study_names()) {
    const std::string csv = kSource + "/docs/study_results/" + name + ".csv";
    std::ifstream in(csv);
    ASSERT_TRUE(in) << csv << " is missing";
    std::string header;
    std::getline(in, header);
    EXPECT_EQ(header, study_csv_header(load_study(kSource + "/configs/studies/" + name + ".yaml", {}, kSource + "/configs")))
        << csv;
  }
}

// 16-byte flits, 256-byte packets with one header flit (the presets' link): at 256 bytes and 8
// targets a dynamic request is 16 + 1 header + 1 target flit (8 two-byte expert IDs), an explicit
// one 16 + 1 + 4 (7 more 8-byte addresses); a dynamic response is a plain 17-flit response.
TEST(PacketEfficiency, TheTableIsThePacketFormatsWireSize) {
  model::LinkParams link;
  link.flit_bytes = 16;
  link.max_packet_payload_bytes = 256;
  link.header_flits_per_packet = 1;
  const std::vector<PacketEfficiencyRow> rows = packet_efficiency_table(link, 8);
  ASSERT_EQ(rows.size(), 11u);  // 16 B .. 16 KB
  EXPECT_EQ(rows.front().payload_bytes, 16u);
  EXPECT_EQ(rows.back().payload_bytes, 16384u);
  const PacketEfficiencyRow& r = rows[4];
  ASSERT_EQ(r.payload_bytes, 256u);
  EXPECT_DOUBLE_EQ(r.request_dysharp, 256.0 / (18 * 16));
  EXPECT_DOUBLE_EQ(r.request_explicit, 256.0 / (21 * 16));
  EXPECT_DOUBLE_EQ(r.response_dysharp, 256.0 / (17 * 16));
  EXPECT_DOUBLE_EQ(r.response_explicit, 256.0 / (21 * 16));
  // Larger transfers amortise nothing per packet: the efficiency levels off above one packet.
  EXPECT_DOUBLE_EQ(rows.back().request_dysharp, r.request_dysharp);
  EXPECT_LT(rows.front().request_explicit, rows.front().request_dysharp);
  const std::string csv = packet_efficiency_csv(rows);
  EXPECT_EQ(csv.substr(0, csv.find('\n') + 1),
            "payload_bytes,request_dysharp,request_explicit,response_dysharp,response_explicit\n");
}

}  // namespace
}  // namespace nvsvp::platform
