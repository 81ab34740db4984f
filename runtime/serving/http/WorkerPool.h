//===- WorkerPool.h - a few threads for work off the IO threads -*- C++ -*-===//
//
// The server parses and tokenizes large request bodies here, so that the IO
// threads keep answering other clients meanwhile (OpenAiApi). Tasks run in
// the order posted; the destructor finishes the running ones and drops the
// rest. The threads run at a lower CPU priority (`niceness`, Linux), so that
// on a busy machine the IO and scheduler threads are not queued behind them.
//
//===----------------------------------------------------------------------===//
#ifndef ACCEL_RUNTIME_SERVING_HTTP_WORKERPOOL_H
#define ACCEL_RUNTIME_SERVING_HTTP_WORKERPOOL_H

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace accel::rt::server {

class WorkerPool {
public:
  explicit WorkerPool(int threads, int niceness = 10);
  ~WorkerPool();
  WorkerPool(const WorkerPool &) = delete;
  WorkerPool &operator=(const WorkerPool &) = delete;

  void post(std::function<void()> task);

private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

} // namespace accel::rt::server

#endif // ACCEL_RUNTIME_SERVING_HTTP_WORKERPOOL_H
