#include "step/remote_step.hpp"

#include "temp_dir.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

using namespace nvfresh;

namespace {

Step ptxas_step()
{
  Step step;
  step.tool = "/usr/local/cuda/bin/ptxas";
  step.tool_exe = "/usr/local/cuda-13.0/bin/ptxas";
  step.cwd = "/home/dev/proj/build";
  step.argv = {"ptxas", "-arch=sm_80",
               "-m64",  "/tmp/tmpxft_00005f7c_00000000-7_k.ptx",
               "-o",    "/tmp/tmpxft_00005f7c_00000000-9_k.sm_80.cubin"};
  step.temp = find_temp_names(step.argv);
  return step;
}

}  // namespace

TEST_CASE("remote step: the Action runs the step's own words after the toolkit check")
{
  const Step step = ptxas_step();
  const RemoteStepAction built =
    remote_step_action(step, {"/tmp/tmpxft_00005f7c_00000000-7_k.ptx"});
  const std::vector<std::string> expected = {"/bin/sh",
                                             "-c",
                                             k_check_script,
                                             "nvfresh-step",
                                             k_toolkit_sums_path,
                                             "/home/dev/proj/build",
                                             "/usr/local/cuda-13.0/bin/ptxas",
                                             "-arch=sm_80",
                                             "-m64",
                                             "/tmp/tmpxft_00005f7c_00000000-7_k.ptx",
                                             "-o",
                                             "/tmp/tmpxft_00005f7c_00000000-9_k.sm_80.cubin"};
  CHECK(built.action.arguments == expected);
  CHECK(built.action.working_directory.empty());
  CHECK(built.action.salt == std::string(k_step_key_version) + "/execute");
}

TEST_CASE("remote step: given files are inputs at their path under the root, the rest outputs")
{
  const Step step = ptxas_step();
  const RemoteStepAction built =
    remote_step_action(step, {"/tmp/tmpxft_00005f7c_00000000-7_k.ptx"});
  CHECK(built.action.input_files ==
        std::map<std::string, std::string>{
          {"tmp/tmpxft_00005f7c_00000000-7_k.ptx", "/tmp/tmpxft_00005f7c_00000000-7_k.ptx"}});
  CHECK(built.action.output_paths ==
        std::vector<std::string>{"tmp/tmpxft_00005f7c_00000000-9_k.sm_80.cubin"});
  CHECK(built.outputs ==
        std::map<std::string, std::string>{{"tmp/tmpxft_00005f7c_00000000-9_k.sm_80.cubin",
                                            "/tmp/tmpxft_00005f7c_00000000-9_k.sm_80.cubin"}});
}

TEST_CASE("remote step: a relative temporary name is placed by the step's working directory")
{
  Step step = ptxas_step();
  step.argv = {"ptxas", "tmpxft_00005f7c_00000000-7_k.ptx", "-o",
               "tmpxft_00005f7c_00000000-9_k.cubin"};
  step.temp = find_temp_names(step.argv);
  const RemoteStepAction built =
    remote_step_action(step, {"/home/dev/proj/build/tmpxft_00005f7c_00000000-7_k.ptx"});
  CHECK(built.action.input_files.contains("home/dev/proj/build/tmpxft_00005f7c_00000000-7_k.ptx"));
  CHECK(built.outputs.at("home/dev/proj/build/tmpxft_00005f7c_00000000-9_k.cubin") ==
        "/home/dev/proj/build/tmpxft_00005f7c_00000000-9_k.cubin");
}

TEST_CASE("remote step: the toolkit files are those of the tool's own toolkit that exist")
{
  test::TempDir dir;
  const std::string root = dir.path() + "/cuda";
  dir.write("cuda/nvvm/bin/cicc", "cicc");
  dir.write("cuda/bin/ptxas", "ptxas");
  dir.write("cuda/bin/nvcc.profile", "TOP = $(_HERE_)/..");
  const std::vector<std::string> expected = {root + "/nvvm/bin/cicc", root + "/bin/ptxas",
                                             root + "/bin/nvcc.profile"};
  CHECK(toolkit_files(root + "/nvvm/bin/cicc") == expected);
  CHECK(toolkit_files(root + "/bin/ptxas") == expected);
  dir.write("cuda/nvvm/libdevice/libdevice.10.bc", "bc");
  CHECK(toolkit_files(root + "/bin/ptxas").size() == 4);
}
