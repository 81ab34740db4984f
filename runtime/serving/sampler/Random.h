//===- Random.h - a portable, seedable PRNG for sampling --------*- C++ -*-===//
//
// xoshiro256** (Blackman and Vigna, 2018) seeded through splitmix64, and an
// exact uniform double in [0, 1) built from the top 53 bits of one draw.
//
// Every operation here is integer arithmetic or one exact conversion, so a
// seed gives the same stream on every machine, compiler and standard
// library. (The <random> engines are portable, but its distributions, e.g.
// std::uniform_real_distribution, are implementation-defined.)
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_SAMPLER_RANDOM_H
#define ACCEL_RUNTIME_SERVING_SAMPLER_RANDOM_H

#include <cstdint>

namespace accel::rt::sampler {

/// One step of splitmix64: advances `state` and returns the next output.
/// From state 0 the outputs are 0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, ...
inline uint64_t splitmix64(uint64_t &state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

class Xoshiro256StarStar {
public:
  /// The state is four consecutive splitmix64 outputs from `seed` (as the
  /// authors recommend); it is never all zero.
  explicit Xoshiro256StarStar(uint64_t seed = 0) { reseed(seed); }

  void reseed(uint64_t seed) {
    uint64_t sm = seed;
    for (uint64_t &w : s_)
      w = splitmix64(sm);
  }

  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  /// A double in [0, 1): k * 2^-53 for k uniform in [0, 2^53). Exact.
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }

  /// Advances the state by 2^128 draws: `n` jumps from one seed give n
  /// non-overlapping streams (one per sequence of a request with n > 1).
  void jump() {
    static constexpr uint64_t kJump[4] = {
        0x180ec6d33cfd0abaULL, 0xd5a61266f0c9392cULL, 0xa9582618e03fc9aaULL,
        0x39abdc4529b1661cULL};
    uint64_t t[4] = {0, 0, 0, 0};
    for (uint64_t word : kJump)
      for (int b = 0; b < 64; ++b) {
        if (word & (uint64_t(1) << b))
          for (int i = 0; i < 4; ++i)
            t[i] ^= s_[i];
        next();
      }
    for (int i = 0; i < 4; ++i)
      s_[i] = t[i];
  }

private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

} // namespace accel::rt::sampler

#endif // ACCEL_RUNTIME_SERVING_SAMPLER_RANDOM_H
