#include "chunkmeta/harness/corpus.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace chunkmeta::harness {

std::variant<CorpusEntry, std::string> load_corpus_entry(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return "cannot open " + path.string();
  std::ostringstream text;
  text << in.rdbuf();
  Json value;
  try {
    value = Json::parse(text.str());
  } catch (const Json::parse_error& e) {
    return path.string() + ": not valid JSON: " + e.what();
  }
  CorpusEntry entry;
  entry.path = path;
  const bool wrapped = value.is_object() && value.contains("workload");
  auto workload = parse_workload(wrapped ? value["workload"] : value);
  if (auto* bad = std::get_if<InputError>(&workload)) return path.string() + ": " + bad->message;
  entry.spec = std::get<SpecWorkload>(workload).spec;
  entry.workload = std::move(std::get<SpecWorkload>(workload).workload);
  // A corpus entry stores the reference outcome as "expected"; a report's
  // "expected" may be a relation's prediction, so only corpus entries count.
  if (wrapped && value.value("format", "") == "chunkmeta-corpus/1" && value.contains("expected")) {
    entry.expected = parse_outcome(*entry.spec, value["expected"]);
    if (!entry.expected) return path.string() + ": \"expected\" is not an outcome";
  }
  return entry;
}

namespace {
std::vector<std::filesystem::path> expand(const std::vector<std::filesystem::path>& inputs, bool json_only) {
  std::vector<std::filesystem::path> files;
  for (const auto& input : inputs) {
    if (std::filesystem::is_directory(input)) {
      for (const auto& item : std::filesystem::recursive_directory_iterator(input)) {
        if (item.is_regular_file() && (!json_only || item.path().extension() == ".json")) files.push_back(item.path());
      }
    } else {
      files.push_back(input);
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}
}  // namespace

std::vector<std::filesystem::path> corpus_files(const std::vector<std::filesystem::path>& inputs) {
  return expand(inputs, true);
}

std::vector<std::filesystem::path> corpus_files_any(const std::vector<std::filesystem::path>& inputs) {
  return expand(inputs, false);
}

std::vector<Counterexample> replay(const CorpusEntry& entry, std::span<const Implementation> implementations) {
  std::vector<Counterexample> failures;
  std::vector<Implementation> of_its_spec;
  for (const auto& implementation : implementations) {
    if (implementation.spec == entry.spec) of_its_spec.push_back(implementation);
  }
  if (entry.expected && !of_its_spec.empty()) {
    const Outcome today = entry.spec->reference(entry.workload);
    if (auto finding = compare_outcomes(*entry.spec, *entry.expected, today)) {
      finding->summary = "the reference no longer gives the outcome stored in " + entry.path.filename().string();
      Counterexample cx;
      cx.implementation = "reference";
      cx.spec = entry.spec;
      cx.property = "stored expectation";
      cx.workload = entry.workload;
      cx.finding = std::move(*finding);
      failures.push_back(std::move(cx));
    }
  }
  for (auto& cx : check_all(entry.workload, of_its_spec, "replay " + entry.path.filename().string()))
    failures.push_back(std::move(cx));
  return failures;
}

}  // namespace chunkmeta::harness
