#include "runtime/tuning.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <mutex>
#include <string_view>

#include "parpat/error.hpp"
#include "runtime/cpu/cpu_device.hpp"

namespace parpat::detail {

bool Limit::allows(int value) const {
  if (value < min || value > max) return false;
  switch (kind) {
    case Kind::range:
      return true;
    case Kind::power_of_two:
      return (value & (value - 1)) == 0;
    case Kind::multiple_of_32:
      return value % 32 == 0;
    case Kind::listed:
      return std::find(listed.begin(), listed.end(), value) != listed.end();
  }
  return false;
}

std::string Limit::describe() const {
  if (kind == Kind::listed) {
    std::string s;
    for (std::size_t i = 0; i < listed.size(); ++i)
      s += (i == 0 ? "" : i + 1 == listed.size() ? " or " : ", ") + std::to_string(listed[i]);
    return s;
  }
  const char* what = kind == Kind::power_of_two     ? "a power of two"
                     : kind == Kind::multiple_of_32 ? "a multiple of 32"
                                                    : "an integer";
  return std::string(what) + " from " + std::to_string(min) + " to " + std::to_string(max);
}

bool scope_matches(Scope scope, const char* match, const DeviceInfo& device) {
  switch (scope) {
    case Scope::any:
      return true;
    case Scope::vendor:
      return device.vendor.find(match) != std::string::npos;
    case Scope::architecture:
      return device.architecture == match;
    case Scope::device:
      return device.name.find(match) != std::string::npos;
  }
  return false;
}

const TuningCatalog& tuning_catalog() {
  static const TuningCatalog catalog = [] {
    TuningCatalog c;
    runtime_tuning_policies(c);
    stream_tuning_policies(c);
#define PARPAT_PATTERN(name) name##_tuning_policies(c);
#include "runtime/patterns.def"
#undef PARPAT_PATTERN
    return c;
  }();
  return catalog;
}

void runtime_tuning_policies(TuningCatalog& catalog) {
  catalog.add<CpuPoolPolicy>();
}

namespace {

[[noreturn]] void refuse(const std::string& why) {
  throw_invalid("PARPAT_TUNING: " + why);
}

const Limit* limit_of(std::string_view key) {
  for (const TuningKey& k : tuning_catalog().keys)
    if (key == k.key) return &k.limit;
  return nullptr;
}

// PARPAT_TUNING ("key=value,key=value"; empty items are skipped), every item checked against
// the catalog's keys and limits.
TuningOverrides parse_overrides(const char* env) {
  TuningOverrides found;
  if (!env) return found;
  std::string_view all = env;
  while (!all.empty()) {
    std::size_t comma = all.find(',');
    std::string item(all.substr(0, comma));
    all = comma == std::string_view::npos ? std::string_view() : all.substr(comma + 1);
    if (item.empty()) continue;
    std::size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      refuse("'" + item + "' is not key=value (keys: the policies in src/*/tuning.hpp)");
    std::string key = item.substr(0, eq);
    const Limit* limit = limit_of(key);
    if (!limit) refuse("unknown key '" + key + "' (keys: the policies in src/*/tuning.hpp)");
    const char* text = item.c_str() + eq + 1;
    char* rest = nullptr;
    errno = 0;
    long long parsed = std::strtoll(text, &rest, 10);
    const bool number =
        rest != text && *rest == '\0' && errno != ERANGE && parsed >= INT_MIN && parsed <= INT_MAX;
    if (!number || !limit->allows(static_cast<int>(parsed)))
      refuse("'" + item + "': " + key + " takes " + limit->describe());
    found.emplace_back(key, static_cast<int>(parsed));
  }
  return found;
}

}  // namespace

std::shared_ptr<const TuningOverrides> tuning_overrides() {
  static std::mutex mutex;
  static std::string parsed_text;
  static bool parsed_set = false;
  static auto parsed = std::make_shared<const TuningOverrides>();
  const char* env = std::getenv("PARPAT_TUNING");
  std::lock_guard<std::mutex> lock(mutex);
  if (parsed_set == (env != nullptr) && (!env || parsed_text == env)) return parsed;
  parsed = std::make_shared<const TuningOverrides>(parse_overrides(env));
  parsed_set = env != nullptr;
  parsed_text = env ? env : "";
  return parsed;
}

void check_tuning_overrides() {
  tuning_overrides();
}

}  // namespace parpat::detail
