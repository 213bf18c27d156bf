// nvfresh doctor [-C build-dir] [--json]: checks the setup of a build tree, one line per check,
// OK or what is wrong and the fix (lib/doctor/doctor.hpp). Exit 0 when every check is OK, 1
// otherwise, 2 on a usage error (no such directory).
#include "doctor/doctor.hpp"
#include "commands/commands.hpp"
#include "commands/subcommand_options.hpp"
#include "util/file_io.hpp"
#include "util/json.hpp"
#include "util/process.hpp"

#include <fmt/format.h>

namespace nvfresh {

int run_doctor(const std::vector<std::string>& args)
{
  SubcommandOptions cli("doctor");
  std::string build_dir = ".";
  bool json = false;
  cli.add_build_dir(build_dir);
  cli.add_json(json);
  if (auto status = cli.parse(args)) {
    return *status;
  }
  if (!stat_file(build_dir).is_directory) {
    fmt::print(stderr, "nvfresh doctor: {} is not a directory; pass a build tree with -C\n",
               build_dir);
    return k_exit_usage_error;
  }
  const DoctorPlan plan = plan_doctor(build_dir, current_environment());
  const std::vector<SetupCheck> checks = run_setup_checks(plan);
  if (json) {
    nlohmann::json out = setup_checks_json(checks);
    out["build_dir"] = plan.build_dir;
    print_json(out);
  } else {
    fmt::print("nvfresh doctor for {}\n{}", plan.build_dir, format_setup_checks(checks));
  }
  return setup_exit_status(checks);
}

}  // namespace nvfresh
