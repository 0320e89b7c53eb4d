// Tuning as typed data. Each variant reads its block sizes and thresholds from a policy struct
// declared beside its kernels (src/<pattern>/tuning.hpp): the struct's member initialisers are
// the defaults, written once; the policy's table sets values per backend, vendor, architecture
// or device (the narrowest match wins, as in CLBlast's database and CUB's policy chain); and
// PARPAT_TUNING ("reduce.fast.block=256,histogram.fast.block=1024") overrides any field by its
// key, "<policy>.<field>", for experiments. A plan resolves its policy once, when it is made:
//
//   const ReduceFastPolicy policy = tuned<ReduceFastPolicy>(device.info());
//
// A policy is a struct of int fields with
//   static constexpr const char* kName;                      // "reduce.fast"
//   static const std::vector<Field<Policy>>& fields();        // every field, with its limits
//   static const std::vector<TableValue<Policy>>& table();    // values that differ per device
//                                                            // (SameOnEveryDevice: none)
// Why each table value is what it is: bench/tuning/measurements.json (date, device, command).
#pragma once

#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "parpat/device.hpp"

namespace parpat::detail {

// How far a table value reaches, from the widest to the narrowest: every device of its backend,
// a vendor (DeviceInfo::vendor contains `match`), an architecture (DeviceInfo::architecture
// equals `match`, e.g. "sm_90"), a device (its name contains `match`, e.g. "H200").
enum class Scope { any, vendor, architecture, device };

// The values a field takes: those the code that reads it handles, so an override can make a
// kernel slower but never wrong, and a mistyped value is refused instead of silently clamped.
struct Limit {
  enum class Kind { range, power_of_two, multiple_of_32, listed };
  Kind kind = Kind::range;
  int min = 0, max = 0;
  std::vector<int> listed;  // Kind::listed: the values themselves, in order

  bool allows(int value) const;
  std::string describe() const;  // "a power of two from 32 to 1024", "0, 4, 5, 8 or 16"
};

inline constexpr int kLarge = 1 << 30;
inline Limit range(int min, int max) {
  return {Limit::Kind::range, min, max, {}};
}
inline Limit power_of_two(int min, int max) {
  return {Limit::Kind::power_of_two, min, max, {}};
}
inline Limit multiple_of_32(int min, int max) {
  return {Limit::Kind::multiple_of_32, min, max, {}};
}
inline Limit one_of(std::initializer_list<int> values) {
  return {Limit::Kind::listed, *values.begin(), *(values.end() - 1), values};
}

// A policy's field: a pointer to one of its int members (an alias, as nvcc's host pass
// rewrites a member-pointer declarator with parentheses that -Wparentheses then flags).
template <class Policy>
using PolicyMember = int Policy::*;

template <class Policy>
struct Field {
  const char* name;  // the key is Policy::kName + "." + name
  PolicyMember<Policy> member;
  Limit limit;
};

template <class Policy>
struct TableValue {
  Backend backend;
  Scope scope;
  const char* match;
  PolicyMember<Policy> member;
  int value;
};

// The base of a policy whose defaults hold on every device: its table is empty.
template <class Policy>
struct SameOnEveryDevice {
  static const std::vector<TableValue<Policy>>& table() {
    static const std::vector<TableValue<Policy>> none;
    return none;
  }
};

bool scope_matches(Scope scope, const char* match, const DeviceInfo& device);

// PARPAT_TUNING's items in order, parsed once per value the variable takes (tests change it at
// run time). Throws Error(invalid_argument) for a malformed item, an unknown key or a value its
// key does not take, naming the values it takes.
using TuningOverrides = std::vector<std::pair<std::string, int>>;
std::shared_ptr<const TuningOverrides> tuning_overrides();

// Throws tuning_overrides()'s error for a bad PARPAT_TUNING at once (the CLI calls it first).
void check_tuning_overrides();

// `Policy` for `device`: its defaults, then the narrowest matching table value of each field,
// then PARPAT_TUNING (where it names a key twice, the later value).
template <class Policy>
Policy tuned(const DeviceInfo& device) {
  Policy policy;
  const std::shared_ptr<const TuningOverrides> overrides = tuning_overrides();
  for (const Field<Policy>& field : Policy::fields()) {
    const TableValue<Policy>* best = nullptr;
    for (const TableValue<Policy>& v : Policy::table())
      if (v.member == field.member && v.backend == device.backend &&
          scope_matches(v.scope, v.match, device) && (!best || v.scope > best->scope))
        best = &v;
    if (best) policy.*field.member = best->value;
    const std::string key = std::string(Policy::kName) + "." + field.name;
    for (const auto& [name, value] : *overrides)
      if (name == key) policy.*field.member = value;
  }
  return policy;
}

// "block=256 items=64": the named fields of Policy on any device of `backend` (the tables may
// differ per device), for `parpat list`.
template <class Policy>
std::string backend_params(Backend backend, std::initializer_list<const char*> names) {
  DeviceInfo any;
  any.backend = backend;
  const Policy policy = tuned<Policy>(any);
  std::string text;
  for (const char* name : names)
    for (const Field<Policy>& field : Policy::fields())
      if (std::string(field.name) == name)
        text += (text.empty() ? "" : " ") + std::string(name) + "=" +
                std::to_string(policy.*field.member);
  return text;
}

// Every policy of the library: the keys PARPAT_TUNING may set, and what is wrong with a default
// or a table value (outside its field's limits, or for a member no field declares).
struct TuningKey {
  std::string key;
  Limit limit;
};

struct TuningCatalog {
  std::vector<TuningKey> keys;
  std::vector<std::string> errors;

  template <class Policy>
  void add() {
    const Policy defaults;
    auto field_of = [](PolicyMember<Policy> member) -> const Field<Policy>* {
      for (const Field<Policy>& f : Policy::fields())
        if (f.member == member) return &f;
      return nullptr;
    };
    for (const Field<Policy>& f : Policy::fields()) {
      const std::string key = std::string(Policy::kName) + "." + f.name;
      if (!f.limit.allows(defaults.*f.member))
        errors.push_back(key + ": the default " + std::to_string(defaults.*f.member) + " is not " +
                         f.limit.describe());
      keys.push_back({key, f.limit});
    }
    for (const TableValue<Policy>& v : Policy::table()) {
      const Field<Policy>* f = field_of(v.member);
      if (!f)
        errors.push_back(std::string(Policy::kName) + ": a table value for an undeclared field");
      else if (!f->limit.allows(v.value))
        errors.push_back(std::string(Policy::kName) + "." + f->name + ": the table's " +
                         std::to_string(v.value) + " for '" + v.match + "' is not " +
                         f->limit.describe());
    }
  }
};

// Built once: the runtime's and the stream's policies, then each pattern's (runtime/patterns.def).
const TuningCatalog& tuning_catalog();

// Each layer adds its policies to the catalog.
void runtime_tuning_policies(TuningCatalog& catalog);
void stream_tuning_policies(TuningCatalog& catalog);
#define PARPAT_PATTERN(name) void name##_tuning_policies(TuningCatalog& catalog);
#include "runtime/patterns.def"
#undef PARPAT_PATTERN

}  // namespace parpat::detail
