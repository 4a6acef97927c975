#include "chunkmeta/harness/corpus.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace chunkmeta::harness {

std::variant<CorpusEntry, std::string> load_corpus_entry(const std::filesystem::path& path) {
  // Only a regular file of a sane size is read: a FIFO would block, /dev/zero never end.
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec) return "cannot open " + path.string() + ": " + ec.message();
  if (std::filesystem::is_directory(status)) return "cannot read the folder " + path.string();
  if (!std::filesystem::is_regular_file(status)) return path.string() + ": not a regular file";
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return "cannot open " + path.string() + ": " + ec.message();
  if (size > kLargestCorpusEntryBytes)
    return path.string() + ": " + std::to_string(size) + " bytes, more than a corpus entry may hold (" +
           std::to_string(kLargestCorpusEntryBytes) + ")";
  std::ifstream in(path);
  if (!in) return "cannot open " + path.string();
  std::ostringstream read;
  read << in.rdbuf();
  const std::string text = read.str();
  auto parsed = parse_json_bounded(text);
  if (const auto* why = std::get_if<std::string>(&parsed)) return path.string() + ": " + *why;
  const Json& value = std::get<Json>(parsed);
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
    std::error_code ec;
    if (std::filesystem::is_directory(input, ec)) {
      // A folder that cannot be read is listed itself: loading it says so, as an unreadable entry.
      std::filesystem::recursive_directory_iterator item(input, ec), end;
      for (; !ec && item != end; item.increment(ec)) {
        std::error_code type_error;
        if (item->is_directory(type_error) && access(item->path().c_str(), R_OK | X_OK) != 0) {
          files.push_back(item->path());
          item.disable_recursion_pending();
          continue;
        }
        // Whatever is not a folder is listed, a FIFO or a dangling link too: loading it says what is
        // wrong (unreadable), as when it is named directly; skipping it would hide an entry.
        if (!item->is_directory(type_error) && (!json_only || item->path().extension() == ".json"))
          files.push_back(item->path());
      }
      if (ec) files.push_back(input);
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
