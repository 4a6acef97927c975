// Runs the real `chunkmeta` binary with files for stdin, stdout and stderr,
// for the tests that drive the CLI.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "scratch_dir.hpp"

namespace chunkmeta {

struct Run {
  int exit_code = -1;
  std::vector<std::string> lines;
  std::string out;
  std::string err;
};

inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// `working_dir`: where it runs (empty: here).
inline Run run_cli(const std::string& arguments, const std::string& input = "",
                   const std::filesystem::path& working_dir = {}) {
  static int counter = 0;
  // ctest runs each test in its own process, in parallel: the pid keeps their files apart.
  const auto dir = std::filesystem::path(testing::TempDir()) /
                   ("chunkmeta-cli-" + std::to_string(::getpid()) + "-" + std::to_string(++counter));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "in", std::ios::binary) << input;
  const std::string command = (working_dir.empty() ? "" : "cd '" + working_dir.string() + "' && ") +
                              std::string(CHUNKMETA_CLI) + " " + arguments + " < " + (dir / "in").string() + " > " +
                              (dir / "out").string() + " 2> " + (dir / "err").string();
  const int status = std::system(command.c_str());
  Run run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = slurp(dir / "out");
  run.err = slurp(dir / "err");
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);  // scratch: nothing of a run is left behind, wherever TempDir() is
  std::istringstream lines(run.out);
  for (std::string line; std::getline(lines, line);) run.lines.push_back(line);
  return run;
}

}  // namespace chunkmeta
