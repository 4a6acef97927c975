#include "cli.hpp"

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <system_error>

namespace chunkmeta::cli {

std::string self_path(const char* argv0) {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(argv0) : exe.string();
}

std::filesystem::path default_corpus(const std::string& self) {
  std::error_code ec;
  const auto corpus = std::filesystem::path(self).parent_path() / CHUNKMETA_CORPUS_FROM_PROGRAM;
  const auto resolved = std::filesystem::weakly_canonical(corpus, ec);
  return ec ? corpus.lexically_normal() : resolved;
}

std::string implementation_help() {
  return "Implementation: a built-in one (" + harness::default_spec().builtin_names() +
         "), cmd:COMMAND (a program speaking the JSON Lines protocol of `compute`), or "
         "plugin:PATH[#NAME] (a shared library exporting <chunkmeta/plugin.h>)";
}

const Spec* spec_named(const std::string& name) {
  const Spec* spec = harness::find_spec(name);
  if (spec == nullptr) std::cerr << "chunkmeta: unknown spec '" << name << "' (the specs: " << harness::spec_names() << ")\n";
  return spec;
}

std::optional<std::vector<Implementation>> implementations(const Spec& spec, const std::vector<std::string>& texts,
                                                           const harness::ResolveOptions& options) {
  if (texts.empty()) return spec.builtins();
  std::vector<Implementation> chosen;
  for (const auto& text : texts) {
    auto resolved = harness::resolve_implementations(spec, text, options);
    if (auto* why = std::get_if<std::string>(&resolved)) {
      std::cerr << "chunkmeta: " << *why << "\n";
      return std::nullopt;
    }
    for (auto& impl : std::get<std::vector<Implementation>>(resolved)) chosen.push_back(std::move(impl));
  }
  return chosen;
}

std::vector<const Spec*> specs_of(const std::string& named, bool all_by_default) {
  if (!named.empty()) {
    const Spec* spec = spec_named(named);
    return spec == nullptr ? std::vector<const Spec*>{} : std::vector<const Spec*>{spec};
  }
  return all_by_default ? harness::all_specs() : std::vector<const Spec*>{&harness::default_spec()};
}

CLI::Validator finite_number(bool zero_allowed) {
  return CLI::Validator(
      [zero_allowed](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        if (text.empty() || end == nullptr || *end != '\0' || !std::isfinite(value) || value < 0 ||
            (value == 0 && !zero_allowed))
          return "must be a finite number " + std::string(zero_allowed ? "at least 0" : "above 0") + ", not '" + text + "'";
        return "";
      },
      zero_allowed ? "FINITE >= 0" : "FINITE > 0");
}

CLI::Validator digits_only(const std::string& what) {
  return CLI::Validator(
      [what](std::string& text) -> std::string {
        if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
          return what + " must be a whole number of digits (0 or more), not '" + text + "'";
        return "";
      },
      "UINT");
}

}  // namespace chunkmeta::cli
