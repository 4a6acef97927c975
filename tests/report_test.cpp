// The text report a user reads in the terminal: small workloads as plain JSON
// (copyable), long arrays shortened so a 32,769-row counterexample stays
// readable, with the full JSON left to the report file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "chunkmeta/harness/oracle.hpp"
#include "fla/fla_spec.hpp"
#include "mamba/mamba_spec.hpp"
#include "chunkmeta/harness/json.hpp"
#include "chunkmeta/harness/report.hpp"
#include "scratch_dir.hpp"

namespace chunkmeta::harness {
namespace {

Counterexample mismatch_on(const Workload& workload, const Outcome& actual, const Spec& spec = mamba_spec()) {
  Counterexample cx;
  cx.implementation = "wrong";
  cx.spec = &spec;
  cx.property = "MatchesReferenceOnEveryValidWorkload";
  cx.workload = workload;
  cx.finding = *compare_outcomes(spec, spec.reference(workload), actual);
  return cx;
}

// The reference's arrays of a valid workload.
Arrays reference_of(const Workload& workload, const Spec& spec = mamba_spec()) {
  return spec.reference(workload).value();
}

std::string line_starting(const std::string& text, const std::string& label) {
  const auto at = text.find("\n  " + label);
  if (at == std::string::npos) return "";
  return text.substr(at + 1, text.find('\n', at + 1) - at - 1);
}

TEST(RenderedReport, PrintsASmallWorkloadAsPlainJson) {
  const Workload w{2, {1}, {0, 2}};
  Arrays wrong = reference_of(w);
  wrong[1][0] = 7;
  const std::string text = render(mismatch_on(w, Outcome(wrong)));
  EXPECT_EQ(line_starting(text, "workload:"),
            R"(  workload:  {"chunk_size":2,"num_computed_tokens":[1],"query_start_loc":[0,2]})");
  EXPECT_EQ(text.find("shortened"), std::string::npos);
}

TEST(RenderedReport, ShortensLongArraysToRunsAndProgressions) {
  // 100 empty rows, then one row of 5 tokens at chunk size 1: 5 chunks.
  Workload w{1, std::vector<std::int64_t>(101, 0), std::vector<std::int64_t>(101, 0)};
  w.query_start_loc.push_back(5);
  Arrays wrong = reference_of(w);
  wrong[1][4] = 0;
  const std::string text = render(mismatch_on(w, Outcome(wrong)));
  EXPECT_EQ(line_starting(text, "workload:"),
            R"(  workload:  {"chunk_size":1,"num_computed_tokens":[0 (101 times)],"query_start_loc":[0 (101 times), 5]})");
  // last_chunk_indices: -1 for the 100 empty rows, then 4.
  EXPECT_NE(line_starting(text, "expected:").find(R"("last_chunk_indices":[-1 (100 times), 4])"), std::string::npos)
      << text;
  EXPECT_NE(text.find("shortened above"), std::string::npos);
  EXPECT_NE(line_starting(text, "first divergence:").find("seq_idx[4]"), std::string::npos) << text;
}

TEST(RenderedReport, ShortensCountingRunsToTheirEnds) {
  // 70 rows of 1 token each, chunk size 1: query_start_loc counts 0..70.
  Workload w{1, std::vector<std::int64_t>(70, 0), {}};
  for (std::int64_t i = 0; i <= 70; ++i) w.query_start_loc.push_back(i);
  Arrays wrong = reference_of(w);
  wrong[0][3] = 9;
  const std::string text = render(mismatch_on(w, Outcome(wrong)));
  EXPECT_NE(line_starting(text, "workload:").find(R"("query_start_loc":[0, 1, ..., 70])"), std::string::npos) << text;
  EXPECT_NE(line_starting(text, "actual:").find(R"("cu_chunk_seqlen":[0, 1, 2, 9, 4, 5, ..., 70])"), std::string::npos)
      << text;
}

TEST(RenderedReport, NamesAnFlaSpecAndShowsItsRowsAsPairs) {
  const Workload w{2, {0, 0}, {0, 3, 4}, Dtype::int64};
  Arrays wrong = reference_of(w, fla_chunk_indices_spec());
  wrong[0][5] = 9;  // row 2, column j
  const std::string text = render(mismatch_on(w, Outcome(wrong), fla_chunk_indices_spec()));
  EXPECT_EQ(line_starting(text, "workload:"),
            R"(  workload:  {"spec":"fla.chunk_indices","chunk_size":2,"cu_seqlens":[0,3,4],"dtype":"int64"})");
  EXPECT_NE(line_starting(text, "expected:").find(R"("chunk_indices":[[0,0],[0,1],[1,0]])"), std::string::npos) << text;
  EXPECT_NE(line_starting(text, "first divergence:").find("chunk_indices[2][1]: expected 0, actual 9"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace chunkmeta::harness

namespace chunkmeta::harness {
namespace {

namespace fs = std::filesystem;

std::string slurp_file(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

fs::path fresh(const std::string& name) { return scratch_dir("writes-" + name); }

TEST(ReportFiles, AreWrittenInPlaceOfASymlinkPlantedAtTheirNameNeverThroughIt) {
  const auto dir = fresh("symlink");
  const auto victim = dir / "victim.txt";
  std::ofstream(victim) << "untouched\n";
  const auto name = dir / "report.json";
  fs::create_symlink(victim, name);
  std::string error;
  ASSERT_TRUE(write_file_atomically(name, "{}\n", &error)) << error;
  EXPECT_EQ(slurp_file(victim), "untouched\n");
  EXPECT_FALSE(fs::is_symlink(name));
  EXPECT_EQ(slurp_file(name), "{}\n");
}

TEST(ReportFiles, FailLoudlyAndLeaveNothingWhenTheyCannotBeWritten) {
  std::string error;
  EXPECT_FALSE(write_file_atomically("/dev/full/cannot/be/here.json", "{}\n", &error));
  EXPECT_NE(error.find("cannot write /dev/full/cannot/be/here.json"), std::string::npos) << error;
}

TEST(ReportFiles, OfImplementationsWhoseNamesDifferOnlyInPunctuationDoNotCollide) {
  const Workload w{4, {0}, {0, 5}};
  Counterexample a = mismatch_on(w, Outcome(Arrays{{0, 5}, {0}, {0}}));
  Counterexample b = a;
  a.implementation = "cmd:sh w.sh";
  b.implementation = "cmd:sh w_sh";
  const auto dir = fresh("collide");
  std::string error;
  const auto first = write_counterexample(a, dir, &error);
  const auto second = write_counterexample(b, dir, &error);
  ASSERT_TRUE(first && second) << error;
  EXPECT_NE(first->report, second->report);
}

}  // namespace
}  // namespace chunkmeta::harness

namespace chunkmeta::harness {
namespace {

// Whether `text` holds a byte a terminal acts on (C0 controls but newline and tab, DEL, a C1 control as UTF-8).
bool has_raw_control(const std::string& text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F) return true;  // a tab moves the cursor, nothing more
    if (c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) < 0xA0) return true;
  }
  return false;
}

// What an implementation said, in every place its words reach a report: what it raised, its evidence, its name.
Counterexample raised_with(const std::string& words) {
  Counterexample cx;
  cx.implementation = "plugin:x.so#" + words;
  cx.spec = &mamba_spec();
  cx.property = "MatchesReferenceOnEveryValidWorkload";
  cx.workload = Workload{4, {0}, {0, 5}};
  cx.finding = finding_of(Misbehaviour{FindingKind::raised, "raised ValueError: " + words, "Traceback:\n" + words},
                          std::nullopt);
  return cx;
}

TEST(PrintedSafely, EveryByteAnImplementationWritesIsShownWithoutActingOnTheTerminal) {
  for (int byte = 0; byte < 256; ++byte) {
    std::string words = "a";
    words.push_back(static_cast<char>(byte));
    words.push_back('b');
    const std::string report = render(raised_with(words));
    EXPECT_FALSE(has_raw_control(report)) << "byte " << byte << ":\n" << report;
  }
  for (const std::string words : {"\xC2\x9B" "31m", "\xE2\x80\xAE" "evil", "\xF0\x9F\x98\x80", "\xC3\x28", "\xED\xA0\x80"}) {
    EXPECT_FALSE(has_raw_control(render(raised_with(words)))) << words;
  }
}

TEST(PrintedSafely, NoLineAnImplementationWritesCanPassForOneOfTheHarnesss) {
  const std::string forged = "boom\nVERIFIED: every property held\nCOUNTEREXAMPLE  implementation fast\n  finding:   none";
  const std::string report = render(raised_with(forged));
  std::istringstream lines(report);
  int headers = 0;
  for (std::string line; std::getline(lines, line);) {
    EXPECT_FALSE(line.starts_with("VERIFIED") || line.starts_with("NOT VERIFIED")) << report;
    if (line.starts_with("COUNTEREXAMPLE")) ++headers;
    if (line.starts_with("  finding:")) {
      EXPECT_NE(line.find("raised: raised ValueError"), std::string::npos) << report;
    }
  }
  EXPECT_EQ(headers, 1) << report;
  EXPECT_NE(report.find("| VERIFIED: every property held"), std::string::npos) << report;  // quoted, still readable
}

TEST(UntrustedJson, AKeyGivenTwiceInOneObjectIsRefusedAtAnyDepth) {
  EXPECT_TRUE(std::holds_alternative<Json>(parse_json_bounded(R"({"a":1,"b":{"a":2}})")));
  for (const char* twice : {R"({"a":1,"a":2})", R"({"x":{"a":1,"a":2}})", R"([{"e":{"code":"x","code":"y"}}])"}) {
    const auto parsed = parse_json_bounded(twice);
    ASSERT_TRUE(std::holds_alternative<std::string>(parsed)) << twice;
    EXPECT_NE(std::get<std::string>(parsed).find("appears twice"), std::string::npos) << twice;
  }
}

}  // namespace
}  // namespace chunkmeta::harness
