// Computes the spec's example through the installed headers and library.
#include <chunkmeta/chunkmeta.hpp>
#include <iostream>

int main() {
  const chunkmeta::Workload workload{64, {0, 70, 128, 1}, {0, 130, 230, 294, 296}};
  const chunkmeta::ChunkMetadata expected{{0, 64, 128, 130, 188, 230, 294, 296}, {0, 0, 0, 1, 1, 2, 3}, {2, 4, 5, 6}};
  const auto result = chunkmeta::fast(workload);
  if (!result.ok() || !(result.value() == expected)) {
    std::cerr << "consumer: unexpected result " << result << "\n";
    return 1;
  }
  std::cout << "consumer: " << result.value() << "\n";
  return 0;
}
