//===- PlanWeights.h - the plan's weights sections, written by all cores -*- C++ -*-===//
//
// Internal to lib/Plan (PlanWriter.cpp writes the file frame around it).
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_LIB_PLAN_PLANWEIGHTS_H
#define ACCEL_LIB_PLAN_PLANWEIGHTS_H

#include "PlanSchedule.h"

namespace accel::planwriter {

/// The weights sections, written by all cores: each tensor is cut into
/// chunks of rows (at most kChunkBytes), every chunk is computed (lazy
/// weights: transposed, narrowed, quantised, sliced... on the fly), given
/// its CRC and written at its offset with pwrite; the section's CRC is the
/// chunks' combined in file order, with the zero padding between them. At
/// most one chunk per thread is in memory.
class WeightsWriter {
public:
  static constexpr size_t kChunkBytes = size_t(16) << 20;

  struct Job {
    const ScheduleBuilder::Constant *constant;
    size_t shard;
    int64_t begin, end; // rows; or bytes of an owned tensor (rowBytes 1)
    uint64_t fileOffset;
    uint64_t length;
    uint32_t crc = 0;
  };

  WeightsWriter(int fd, const std::vector<ScheduleBuilder::Constant> &constants,
                const PlanOptions &options)
      : fd_(fd), constants_(constants), options_(options) {}

  /// Plans the chunks of one weights section (rank `rank`) at `base`.
  void addSection(size_t rank, uint64_t base, uint64_t size) {
    Section sec;
    sec.base = base;
    sec.size = size;
    sec.firstJob = jobs_.size();
    for (const auto &c : constants_) {
      size_t shard = c.count() == 1 ? 0 : rank;
      uint64_t at = base + c.offset;
      if (!c.shards.empty()) {
        std::optional<weights::Rows> rows = weights::rowsOf(c.shards[shard]);
        const int64_t step =
            std::max<int64_t>(1, int64_t(kChunkBytes / std::max<size_t>(rows->rowBytes, 1)));
        for (int64_t r = 0; r < rows->rows; r += step) {
          int64_t e = std::min(rows->rows, r + step);
          jobs_.push_back({&c, shard, r, e, at, uint64_t(e - r) * rows->rowBytes});
          at += uint64_t(e - r) * rows->rowBytes;
        }
      } else {
        const int64_t n = int64_t(c.owned[shard]->byteSize());
        for (int64_t r = 0; r < n; r += int64_t(kChunkBytes)) {
          int64_t e = std::min(n, r + int64_t(kChunkBytes));
          jobs_.push_back({&c, shard, r, e, at, uint64_t(e - r)});
          at += uint64_t(e - r);
        }
      }
      ++sec.tensors;
    }
    sec.endJob = jobs_.size();
    sections_.push_back(sec);
    totalTensors_ += sec.tensors;
  }

  /// Computes and writes every chunk; the sections' CRCs in order. Empty
  /// `error` on success.
  std::vector<uint32_t> run(std::string &error) {
    std::atomic<size_t> next{0};
    std::atomic<bool> failed{false};
    std::mutex mu;
    uint64_t tensorsDone = 0, bytesDone = 0;
    auto report = [&] {
      if (options_.onProgress)
        options_.onProgress("writing weights", tensorsDone, totalTensors_, bytesDone);
    };
    report();
    auto work = [&] {
      std::vector<char> buf;
      while (!failed) {
        size_t i = next++;
        if (i >= jobs_.size())
          return;
        Job &job = jobs_[i];
        const char *data;
        if (!job.constant->shards.empty()) {
          ElementsAttr attr = job.constant->shards[job.shard];
          std::optional<weights::Rows> rows = weights::rowsOf(attr);
          buf.resize(job.length);
          rows->produce(job.begin, job.end, buf.data());
          data = buf.data();
        } else {
          data = static_cast<const char *>(job.constant->owned[job.shard]->rawData()) + job.begin;
        }
        job.crc = fmt::crc32c(data, job.length);
        for (uint64_t done = 0; done < job.length;) {
          ssize_t n = ::pwrite(fd_, data + done, size_t(job.length - done),
                               off_t(job.fileOffset + done));
          if (n < 0 && errno == EINTR)
            continue;
          if (n <= 0) {
            std::lock_guard<std::mutex> lock(mu);
            error = std::strerror(n < 0 ? errno : ENOSPC);
            failed = true;
            return;
          }
          done += uint64_t(n);
        }
        std::lock_guard<std::mutex> lock(mu);
        bytesDone += job.length;
        // A tensor is done when its last chunk is (chunks finish in any
        // order; counting last chunks is close enough for a progress line).
        if (i + 1 == jobs_.size() || jobs_[i + 1].constant != job.constant ||
            jobs_[i + 1].shard != job.shard || jobs_[i + 1].begin == 0)
          ++tensorsDone;
        report();
      }
    };
    weights::runOnCores(int64_t(jobs_.size()), work);
    std::vector<uint32_t> crcs;
    if (failed)
      return crcs;
    // Each section's CRC: its chunks' combined with the zeros between them.
    std::vector<char> zeros(fmt::kSectionAlignment, 0);
    auto zeroCrc = [&](uint32_t crc, uint64_t n) {
      while (n) {
        size_t k = size_t(std::min<uint64_t>(n, zeros.size()));
        crc = fmt::crc32c(zeros.data(), k, crc);
        n -= k;
      }
      return crc;
    };
    for (const Section &sec : sections_) {
      uint32_t crc = 0;
      uint64_t pos = sec.base;
      for (size_t j = sec.firstJob; j < sec.endJob; ++j) {
        const Job &job = jobs_[j];
        crc = zeroCrc(crc, job.fileOffset - pos);
        crc = fmt::crc32cCombine(crc, job.crc, job.length);
        pos = job.fileOffset + job.length;
      }
      crc = zeroCrc(crc, sec.base + sec.size - pos);
      crcs.push_back(crc);
    }
    return crcs;
  }

private:
  struct Section {
    uint64_t base = 0, size = 0;
    size_t firstJob = 0, endJob = 0;
    uint64_t tensors = 0;
  };
  int fd_;
  const std::vector<ScheduleBuilder::Constant> &constants_;
  const PlanOptions &options_;
  std::vector<Job> jobs_;
  std::vector<Section> sections_;
  uint64_t totalTensors_ = 0;
};

/// pwrite of all of `n` bytes at `offset`.
inline bool writeAt(int fd, const void *data, size_t n, uint64_t offset) {
  const char *p = static_cast<const char *>(data);
  while (n) {
    ssize_t k = ::pwrite(fd, p, n, off_t(offset));
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return false;
    p += k;
    n -= size_t(k);
    offset += uint64_t(k);
  }
  return true;
}

} // namespace accel::planwriter

#endif // ACCEL_LIB_PLAN_PLANWEIGHTS_H
