// Uses the installed package's public API on the CPU device and checks the answers against
// values computed here; exit status 1 on any mismatch.
#include <parpat/parpat.hpp>

#include <cstdint>
#include <cstdio>
#include <vector>

int main() {
  parpat::Device cpu = parpat::Device::open(parpat::Backend::cpu);
  std::vector<std::int32_t> values(100003);
  std::int64_t expected_sum = 0;
  std::vector<std::uint64_t> expected_counts(10, 0);
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = static_cast<std::int32_t>((i * 7919) % 1000);
    expected_sum += values[i];
    expected_counts[static_cast<std::size_t>(values[i] / 100)]++;
  }
  parpat::Array x = parpat::Array::from_vector(cpu, values);

  parpat::ReduceResult sum = parpat::reduce(x, {parpat::ReduceOp::sum});
  parpat::HistogramResult hist = parpat::histogram(x, parpat::HistogramBins::even(10, 0, 1000));

  bool ok = sum.values.size() == 1 && sum.values[0].i == expected_sum &&
            hist.counts == expected_counts && hist.underflow == 0 && hist.overflow == 0;
  std::printf("parpat consumer on %s: sum %lld (expected %lld), histogram %s\n",
              cpu.label().c_str(), static_cast<long long>(sum.values[0].i),
              static_cast<long long>(expected_sum), ok ? "matches" : "DIFFERS");
  return ok ? 0 : 1;
}
