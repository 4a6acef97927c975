// run_command: a shell command run with a time limit and its output bounded
// (subprocess.hpp): how the harness reads an isolated plugin's table (`chunkmeta
// plugin-table` in a child). It and everything it starts end with its process group.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "chunkmeta/harness/subprocess.hpp"
#include "process_guard.hpp"

namespace chunkmeta::harness {

using process::Clock;

std::string CommandOutput::how_it_ended() const {
  return timed_out ? "did not end within its time (killed)" : process::describe_status(status);
}

CommandOutput run_command(const std::string& command, double timeout_seconds, std::size_t max_output) {
  process::ignore_sigpipe_once();
  CommandOutput result;
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
    result.status = 127 << 8;
    result.err = std::string("cannot create pipes: ") + std::strerror(errno);
    return result;
  }
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    const int null = open("/dev/null", O_RDONLY);
    dup2(null, STDIN_FILENO);
    dup2(out[1], STDOUT_FILENO);
    dup2(err[1], STDERR_FILENO);
    syscall(SYS_close_range, 3, ~0U, 0);
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  if (pid < 0) {
    close(out[0]);
    close(err[0]);
    result.status = 127 << 8;
    result.err = std::string("cannot fork: ") + std::strerror(errno);
    return result;
  }
  setpgid(pid, pid);
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_seconds);
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  std::string* kept[2] = {&result.out, &result.err};
  while (fds[0].fd >= 0 || fds[1].fd >= 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      result.timed_out = true;
      break;
    }
    const int ready = poll(fds, 2, static_cast<int>(left));
    if (ready < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[1 << 16];
      const ssize_t got = read(fds[i].fd, buf, sizeof buf);
      if (got > 0 && kept[i]->size() < max_output)
        kept[i]->append(buf, std::min(static_cast<std::size_t>(got), max_output - kept[i]->size()));
      if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) fds[i].fd = -1;
    }
  }
  kill(-pid, SIGKILL);  // whatever it left behind, or all of it after a timeout
  waitpid(pid, &result.status, 0);
  close(out[0]);
  close(err[0]);
  return result;
}
}  // namespace chunkmeta::harness
