#include "chunkmeta/harness/plugin.hpp"

#include "chunkmeta/harness/printable.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <filesystem>
#include <memory>

#include "chunkmeta/harness/json.hpp"
#include "chunkmeta/harness/spec.hpp"
#include "chunkmeta/plugin.h"

namespace chunkmeta::harness {
namespace {

constexpr std::int32_t kGuard = 0x7A7A7A7A;
constexpr std::size_t kGuardWords = 16;
// Sizes a plugin may ask for: what an answer to its workload can hold (Spec::most_answer_entries), and never
// more than the library's own cap on chunks, two entries a chunk, plus one.
constexpr std::int64_t kLargestBuffer = 2 * Limits::kDefaultMaxChunks + 1;
// Buffers offered for a workload whose size the library cannot tell (invalid input).
constexpr std::int64_t kDefaultCapacity = 64;

// One output array with guard words past its capacity.
struct GuardedBuffer {
  std::vector<std::int32_t> storage;
  std::int64_t capacity = 0;
  void reset(std::int64_t size) {
    capacity = size;
    storage.assign(static_cast<std::size_t>(size) + kGuardWords, -7);
    std::fill(storage.begin() + size, storage.end(), kGuard);
  }
  bool guard_intact() const {
    return std::all_of(storage.begin() + capacity, storage.end(), [](std::int32_t v) { return v == kGuard; });
  }
};

// The inputs a plugin is given: copies of the workload's arrays and scalars,
// compared with the workload after the call. Its pointers are const, but C
// can write through them: a plugin that changes what it was given is a
// finding (changed_input), and the workload the harness judges with stays as it was.
class SentInputs {
 public:
  SentInputs(const Spec& spec, const Workload& w) : spec_(spec), w_(w), scalars_(abi_scalars(spec, w)) {
    for (const auto& input : spec.inputs()) {
      if (!is_array(input.slot)) continue;
      arrays_.push_back({input, array_in(w, input.slot, input.index)});
    }
  }
  // The copy of the array in `slot` (the first of its kind), or nullptr when the spec does not read it.
  const std::int64_t* data(Slot slot) const {
    const auto* sent = find(slot);
    return sent != nullptr ? sent->values.data() : nullptr;
  }
  std::int64_t length(Slot slot) const {
    const auto* sent = find(slot);
    return sent != nullptr ? static_cast<std::int64_t>(sent->values.size()) : 0;
  }
  // Every array, in the spec's order (ABI version 3).
  std::vector<const std::int64_t*> all_data() const {
    std::vector<const std::int64_t*> all;
    for (const auto& sent : arrays_) all.push_back(sent.values.data());
    return all;
  }
  std::vector<std::int64_t> all_lengths() const {
    std::vector<std::int64_t> all;
    for (const auto& sent : arrays_) all.push_back(static_cast<std::int64_t>(sent.values.size()));
    return all;
  }
  const std::vector<std::int64_t>& scalars() const { return scalars_; }

  // The first input the call changed, or nullopt.
  std::optional<Misbehaviour> changed() const {
    for (const auto& sent : arrays_) {
      if (auto changed = input_changed(sent.input.name, array_in(w_, sent.input.slot, sent.input.index), sent.values))
        return changed;
    }
    const std::vector<std::int64_t> given = abi_scalars(spec_, w_);
    const auto [was, is] = std::mismatch(given.begin(), given.end(), scalars_.begin());
    if (was == given.end()) return std::nullopt;
    const std::size_t at = static_cast<std::size_t>(was - given.begin());
    return Misbehaviour{FindingKind::changed_input,
                        "changed its input " + std::string(abi_scalar_input(spec_, at)) + ": scalar " +
                            std::to_string(at) + " of the ABI was " + std::to_string(*was) + ", is " +
                            std::to_string(*is) + " after the call",
                        ""};
  }

 private:
  struct Array {
    Input input;
    std::vector<std::int64_t> values;
  };
  const Array* find(Slot slot) const {
    const auto it = std::find_if(arrays_.begin(), arrays_.end(), [&](const Array& a) { return a.input.slot == slot; });
    return it != arrays_.end() ? &*it : nullptr;
  }
  const Spec& spec_;
  const Workload& w_;
  std::vector<Array> arrays_;
  std::vector<std::int64_t> scalars_;
};

Misbehaviour broke_abi(const std::string& what) {
  return Misbehaviour{FindingKind::malformed_output, "broke the plugin ABI: " + what, {}};
}

// The ABI's common protocol, for every version: buffers sized from the
// spec (or a default for invalid input), guard words checked, the inputs
// (`sent`) compared with the workload, a refusal read as an Error, one
// regrowth when the plugin asks for more.
// `call(buffers, sizes, error_code, error_field, error_index)` runs compute.
template <typename Call>
Answer call_with_buffers(const Spec& spec, const Workload& w, const SentInputs& sent, Call&& call) {
  const auto outputs = spec.outputs();
  const std::size_t count = outputs.size();
  std::vector<GuardedBuffer> buffers(count);
  std::vector<std::int64_t> capacity(count, kDefaultCapacity);
  if (const auto entries = spec.output_entries(w)) capacity = *entries;
  for (int attempt = 0; attempt < 2; ++attempt) {
    for (std::size_t b = 0; b < count; ++b) buffers[b].reset(capacity[b]);
    std::vector<std::int64_t> reported(count, 0);
    const char* error_code = nullptr;
    const char* error_field = nullptr;
    std::int64_t error_index = -1;
    const int status = call(buffers, reported, error_code, error_field, error_index);
    for (std::size_t b = 0; b < count; ++b) {
      if (!buffers[b].guard_intact())
        return broke_abi(std::string("wrote past the end of ") + std::string(outputs[b].name) + " (capacity " +
                         std::to_string(capacity[b]) + ")");
    }
    if (auto changed = sent.changed()) return std::move(*changed);
    switch (status) {
      case CHUNKMETA_OK: {
        Arrays arrays(count);
        for (std::size_t b = 0; b < count; ++b) {
          if (reported[b] < 0 || reported[b] > capacity[b])
            return broke_abi(std::string("reported ") + std::to_string(reported[b]) + " entries written to " +
                             std::string(outputs[b].name) + ", whose capacity is " + std::to_string(capacity[b]));
          arrays[b].assign(buffers[b].storage.begin(), buffers[b].storage.begin() + reported[b]);
        }
        return Outcome(std::move(arrays));
      }
      case CHUNKMETA_REJECTED: {
        const auto code = error_code ? parse_error_code(error_code) : std::nullopt;
        if (!code)
          return broke_abi(std::string("rejected the workload with error code ") +
                           (error_code ? "\"" + std::string(error_code) + "\"" : "NULL") +
                           ", which is not one of chunkmeta's codes");
        const auto field = error_field ? known_field(error_field) : std::nullopt;
        return Outcome(Error{*code, field.value_or(""), error_index < 0 ? Error::kNoIndex : error_index, 0, 0});
      }
      case CHUNKMETA_BUFFER_TOO_SMALL: {
        bool grew = false;
        // All buffers together hold at most what an answer to the workload can hold.
        const auto most = static_cast<std::int64_t>(std::min<std::size_t>(spec.most_answer_entries(w), kLargestBuffer));
        std::int64_t asked = 0;
        for (std::size_t b = 0; b < count; ++b) {
          if (reported[b] < 0 || reported[b] > most - asked)
            return broke_abi(std::string("asked for ") + std::to_string(reported[b]) + " entries of " +
                             std::string(outputs[b].name) + ", more than an answer to this workload can hold (" +
                             std::to_string(most) + ")" +
                             (asked > 0 ? ", with the " + std::to_string(asked) + " entries of the outputs before it" : ""));
          asked += reported[b];
          grew = grew || reported[b] > capacity[b];
          capacity[b] = std::max(capacity[b], reported[b]);
        }
        if (!grew) return broke_abi("said its buffers were too small, but asked for no larger size");
        continue;
      }
      default:
        return broke_abi("returned status " + std::to_string(status) + ", which is not a chunkmeta_status");
    }
  }
  return broke_abi("said its buffers were too small again after they were grown to the sizes it asked for");
}

Answer call_v1(const chunkmeta_implementation_v1& impl, const Workload& w) {
  const SentInputs sent(default_spec(), w);
  const chunkmeta_workload_v1 input{w.chunk_size, sent.data(Slot::per_row), sent.length(Slot::per_row),
                                    sent.data(Slot::offsets), sent.length(Slot::offsets)};
  return call_with_buffers(default_spec(), w, sent,
                           [&](std::vector<GuardedBuffer>& buffers, std::vector<std::int64_t>& sizes, const char*& code,
                               const char*& field, std::int64_t& index) {
    chunkmeta_output_v1 out{};
    out.cu_chunk_seqlen = buffers[0].storage.data();
    out.cu_chunk_seqlen_capacity = buffers[0].capacity;
    out.seq_idx = buffers[1].storage.data();
    out.seq_idx_capacity = buffers[1].capacity;
    out.last_chunk_indices = buffers[2].storage.data();
    out.last_chunk_indices_capacity = buffers[2].capacity;
    out.error_index = -1;
    const int status = impl.compute(&input, &out);
    sizes = {out.cu_chunk_seqlen_size, out.seq_idx_size, out.last_chunk_indices_size};
    code = out.error_code;
    field = out.error_field;
    index = out.error_index;
    return status;
  });
}

// Version 2 passes a chunk size, computed tokens and offsets, and takes at most four outputs.
bool fits_v2(const Spec& spec) {
  for (const Slot slot : {Slot::block_size, Slot::second_per_row, Slot::optional_scalar, Slot::flag, Slot::more_scalar,
                          Slot::more_per_row, Slot::more_optional, Slot::more_flag}) {
    if (spec.reads(slot)) return false;
  }
  return spec.reads(Slot::offsets) && spec.outputs().size() <= CHUNKMETA_MAX_OUTPUTS;
}

Answer call_v2(const chunkmeta_implementation_v2& impl, const Spec& spec, const Workload& w) {
  const std::string spec_name(spec.name());
  const SentInputs sent(spec, w);
  const chunkmeta_workload_v2 input{spec_name.c_str(),
                                    w.chunk_size,
                                    sent.data(Slot::per_row),
                                    sent.length(Slot::per_row),
                                    sent.data(Slot::offsets),
                                    sent.length(Slot::offsets),
                                    w.dtype == Dtype::int64 ? 64u : 32u};
  return call_with_buffers(spec, w, sent, [&](std::vector<GuardedBuffer>& buffers, std::vector<std::int64_t>& sizes,
                                              const char*& code, const char*& field, std::int64_t& index) {
    chunkmeta_output_v2 out{};
    for (std::size_t b = 0; b < buffers.size(); ++b) {
      out.arrays[b] = buffers[b].storage.data();
      out.capacities[b] = buffers[b].capacity;
    }
    out.error_index = -1;
    const int status = impl.compute(&input, &out);
    for (std::size_t b = 0; b < buffers.size(); ++b) sizes[b] = out.sizes[b];
    code = out.error_code;
    field = out.error_field;
    index = out.error_index;
    return status;
  });
}

Answer call_v3(const chunkmeta_implementation_v3& impl, const Spec& spec, const Workload& w) {
  const std::string spec_name(spec.name());
  const SentInputs sent(spec, w);
  const std::vector<const std::int64_t*> arrays = sent.all_data();
  const std::vector<std::int64_t> lengths = sent.all_lengths();
  const chunkmeta_workload_v3 input{spec_name.c_str(),
                                    static_cast<std::uint32_t>(sent.scalars().size()),
                                    sent.scalars().data(),
                                    static_cast<std::uint32_t>(arrays.size()),
                                    arrays.data(),
                                    lengths.data(),
                                    w.dtype == Dtype::int64 ? 64u : 32u};
  return call_with_buffers(spec, w, sent, [&](std::vector<GuardedBuffer>& buffers, std::vector<std::int64_t>& sizes,
                                              const char*& code, const char*& field, std::int64_t& index) {
    std::vector<std::int32_t*> outputs;
    std::vector<std::int64_t> capacities;
    for (auto& buffer : buffers) {
      outputs.push_back(buffer.storage.data());
      capacities.push_back(buffer.capacity);
    }
    chunkmeta_output_v3 out{static_cast<std::uint32_t>(buffers.size()), outputs.data(), capacities.data(), sizes.data(),
                            nullptr, nullptr, -1};
    const int status = impl.compute(&input, &out);
    code = out.error_code;
    field = out.error_field;
    index = out.error_index;
    return status;
  });
}

// A versioned table's implementations, each of a spec the registry knows and with a compute function.
template <typename Table, typename Call>
std::string offer_table(const std::string& path, const char* entry, std::uint32_t version, const Table* table,
                        const Call& offer_one) {
  if (table == nullptr) return "plugin " + path + ": " + entry + "() returned NULL";
  if (table->abi_version != version)
    return "plugin " + path + " says ABI version " + std::to_string(table->abi_version) + " from " + entry +
           "; this chunkmeta reads version " + std::to_string(version) + " there";
  for (std::uint32_t i = 0; i < table->implementation_count; ++i) {
    const auto* impl = &table->implementations[i];
    const Spec* spec = find_spec(impl->spec ? impl->spec : "");
    if (spec == nullptr)
      return "plugin " + path + ": implementation " + (impl->name ? impl->name : "?") + " computes spec \"" +
             (impl->spec ? impl->spec : "NULL") + "\", which is not one of " + spec_names();
    if (impl->compute == nullptr)
      return "plugin " + path + ": implementation " + (impl->name ? impl->name : "?") + " has no compute function";
    if (auto refused = offer_one(impl, *spec); !refused.empty()) return "plugin " + path + ": " + refused;
  }
  return "";
}

}  // namespace

PluginName split_plugin_name(const std::string& text) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(text, ec)) return {text, ""};
  // A '#' may be part of the path or of the implementation's name: the path is
  // the shortest prefix before a '#' that names a file.
  for (auto hash = text.find('#'); hash != std::string::npos; hash = text.find('#', hash + 1)) {
    if (std::filesystem::is_regular_file(text.substr(0, hash), ec)) return {text.substr(0, hash), text.substr(hash + 1)};
  }
  const auto last = text.rfind('#');  // no such file: the error names the path as most likely meant
  return last == std::string::npos ? PluginName{text, ""} : PluginName{text.substr(0, last), text.substr(last + 1)};
}

std::variant<std::vector<Implementation>, std::string> load_plugin(const std::string& text) {
  const PluginName named = split_plugin_name(text);
  const std::string& path = named.path;
  const std::string& wanted = named.name;  // empty: every implementation
  // Kept loaded for the life of the process: implementations point into it.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return "cannot load plugin " + path + ": " + dlerror();
  std::vector<Implementation> found;
  std::string names;
  std::vector<std::string> seen;
  std::string misnamed;  // the first name that names nothing, or two implementations: the plugin's table is refused
  const auto offer = [&](const char* name_text, const char* description, const Spec& spec, std::uint32_t flags,
                         std::function<Answer(const Workload&)> compute) {
    const std::string name = name_text ? name_text : "";
    // A name is how --impl, reports and replays pick one implementation: one, unique, printable.
    if (misnamed.empty() && (name.empty() || !is_printable_line(name) || name.find('#') != std::string::npos)) {
      misnamed = "plugin " + path + ": an implementation is named \"" + printable_line(name) +
                 "\" (a name must be non-empty, without '#' or control characters)";
    } else if (misnamed.empty() && std::find(seen.begin(), seen.end(), name) != seen.end()) {
      misnamed = "plugin " + path + ": two implementations are named \"" + name + "\" (each name must pick one)";
    }
    seen.push_back(name);
    names += (names.empty() ? "" : ", ") + printable_line(name);
    if (!wanted.empty() && name != wanted) return;
    Implementation out;
    out.name = "plugin:" + path + "#" + name;
    out.description = printable_line(description ? description : "");
    out.spec = &spec;
    out.rejects_invalid_input = (flags & CHUNKMETA_REJECTS_INVALID_INPUT) != 0;
    out.compute = std::move(compute);
    found.push_back(std::move(out));
  };
  if (void* v3 = dlsym(handle, CHUNKMETA_PLUGIN_ENTRY_V3)) {
    const auto* table = reinterpret_cast<chunkmeta_plugin_entry_v3>(v3)();
    const std::string refused = offer_table(path, CHUNKMETA_PLUGIN_ENTRY_V3, CHUNKMETA_PLUGIN_ABI_VERSION_3, table,
                                            [&](const chunkmeta_implementation_v3* impl, const Spec& spec) {
                                              offer(impl->name, impl->description, spec, impl->flags,
                                                    [impl, &spec](const Workload& w) { return call_v3(*impl, spec, w); });
                                              return std::string();
                                            });
    if (!refused.empty()) return refused;
  } else if (void* v2 = dlsym(handle, CHUNKMETA_PLUGIN_ENTRY_V2)) {
    const auto* table = reinterpret_cast<chunkmeta_plugin_entry_v2>(v2)();
    const std::string refused = offer_table(path, CHUNKMETA_PLUGIN_ENTRY_V2, CHUNKMETA_PLUGIN_ABI_VERSION_2, table,
                                            [&](const chunkmeta_implementation_v2* impl, const Spec& spec) {
                                              if (!fits_v2(spec))
                                                return "implementation " + std::string(impl->name ? impl->name : "?") +
                                                       " computes spec " + std::string(spec.name()) +
                                                       ", whose inputs or outputs ABI version 2 cannot pass (use version 3)";
                                              offer(impl->name, impl->description, spec, impl->flags,
                                                    [impl, &spec](const Workload& w) { return call_v2(*impl, spec, w); });
                                              return std::string();
                                            });
    if (!refused.empty()) return refused;
  } else if (void* v1 = dlsym(handle, CHUNKMETA_PLUGIN_ENTRY_V1)) {
    const chunkmeta_plugin_v1* table = reinterpret_cast<chunkmeta_plugin_entry_v1>(v1)();
    if (table == nullptr) return "plugin " + path + ": " + CHUNKMETA_PLUGIN_ENTRY_V1 + "() returned NULL";
    if (table->abi_version != CHUNKMETA_PLUGIN_ABI_VERSION)
      return "plugin " + path + " speaks ABI version " + std::to_string(table->abi_version) + "; this chunkmeta speaks " +
             std::to_string(CHUNKMETA_PLUGIN_ABI_VERSION);
    for (std::uint32_t i = 0; i < table->implementation_count; ++i) {
      const chunkmeta_implementation_v1* impl = &table->implementations[i];
      if (impl->compute == nullptr) return "plugin " + path + ": implementation " + (impl->name ? impl->name : "?") + " has no compute function";
      offer(impl->name, impl->description, default_spec(), impl->flags, [impl](const Workload& w) { return call_v1(*impl, w); });
    }
  } else {
    return "plugin " + path + " exports none of " + CHUNKMETA_PLUGIN_ENTRY_V3 + ", " + CHUNKMETA_PLUGIN_ENTRY_V2 +
           " and " + CHUNKMETA_PLUGIN_ENTRY_V1 + " (see <chunkmeta/plugin.h>)";
  }
  if (!misnamed.empty()) return misnamed;
  if (found.empty()) {
    if (wanted.empty()) return "plugin " + path + " offers no implementation";
    return "plugin " + path + " has no implementation named " + wanted + " (it has: " + names + ")";
  }
  return found;
}

namespace {
// How many ABI scalars an input is passed as (abi_scalars).
std::size_t abi_scalar_count(const Input& input) {
  if (is_optional(input.slot)) return 2;
  return is_flag(input.slot) || is_integer_scalar(input.slot) ? 1 : 0;
}
}  // namespace

std::string_view abi_scalar_input(const Spec& spec, std::size_t position) {
  for (const auto& input : spec.inputs()) {
    const std::size_t count = abi_scalar_count(input);
    if (position < count) return input.name;
    position -= count;
  }
  return "(past the scalars)";
}

std::vector<std::int64_t> abi_scalars(const Spec& spec, const Workload& w) {
  std::vector<std::int64_t> scalars;
  for (const auto& input : spec.inputs()) {
    if (is_optional(input.slot)) {
      const auto value = optional_in(w, input.slot, input.index);
      scalars.push_back(value ? 1 : 0);
      scalars.push_back(value.value_or(0));
    } else if (is_flag(input.slot)) {
      scalars.push_back(flag_in(w, input.slot, input.index) ? 1 : 0);
    } else if (is_integer_scalar(input.slot)) {
      scalars.push_back(scalar_in(w, input.slot, input.index));
    }
  }
  return scalars;
}

void read_abi_scalars(const Spec& spec, std::span<const std::int64_t> scalars, Workload& w) {
  std::size_t next = 0;
  const auto take = [&](std::int64_t& into) {
    if (next < scalars.size()) into = scalars[next];
    ++next;
  };
  for (const auto& input : spec.inputs()) {
    if (is_optional(input.slot)) {
      std::int64_t given = 0;
      std::int64_t value = 0;
      take(given);
      take(value);
      optional_in(w, input.slot, input.index) = given != 0 ? std::optional<std::int64_t>(value) : std::nullopt;
    } else if (is_flag(input.slot)) {
      std::int64_t flag = flag_in(w, input.slot, input.index) ? 1 : 0;
      take(flag);
      set_flag(w, input.slot, input.index, flag != 0);
    } else if (is_integer_scalar(input.slot)) {
      take(scalar_in(w, input.slot, input.index));
    }
  }
}

}  // namespace chunkmeta::harness
