// Where a job may create a file on a client's word: an in-job branch's output (`rewind
// steer branch --output F`, a live C API run's branch). A client holding the token may
// steer the job, never make it write into a device, a FIFO or a system tree.
#pragma once
#include <string>

namespace rwd::kernel {

/// Throws std::invalid_argument, one line naming `path`, unless it names a regular file
/// or nothing yet (a dangling symbolic link is refused: the file would appear where it
/// points), in an existing directory this process may write, outside /dev, /proc and
/// /sys. Nothing is opened: a FIFO is never waited on, a device never touched. Local.
void check_output_target(const std::string& path);

}  // namespace rwd::kernel
