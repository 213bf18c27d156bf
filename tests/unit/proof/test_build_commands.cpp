#include "proof/build_commands.hpp"

#include <catch2/catch.hpp>

using namespace nvfresh;

namespace {

// Abridged from CMake 3.25's Ninja generator (build.ninja includes CMakeFiles/rules.ninja), with
// a custom command calling nvcc and a rule written the way newer CMake writes it (${LAUNCHER}).
constexpr const char* k_rules = R"(
rule CUDA_COMPILER__k_
  depfile = $DEP_FILE
  deps = gcc
  command = /opt/nvfresh /usr/local/cuda/bin/nvcc -forward-unknown-to-host-compiler $DEFINES $FLAGS -MD -MT $out -MF $DEP_FILE -x cu -c $in -o $out
  description = Building CUDA object $out
rule CUDA_COMPILER__n_
  command = ${LAUNCHER}${CODE_CHECK}/usr/local/cuda/bin/nvcc -c $in -o $out
  description = Building CUDA object $out
rule CUSTOM_COMMAND
  command = $COMMAND
  description = $DESC
)";

constexpr const char* k_build = R"(
cmake_ninja_workdir = /b/
include CMakeFiles/rules.ninja
build CMakeFiles/k.dir/a.cu.o: CUDA_COMPILER__k_ /s/a.cu | .nvfresh/stamps/1.stamp || cmake_object_order_depends_target_k
  DEFINES = -Dk_EXPORTS
  DEP_FILE = CMakeFiles/k.dir/a.cu.o.d
  FLAGS = --generate-code=arch=compute_80,code=[compute_80,sm_80]
build CMakeFiles/n.dir/b.cu.o: CUDA_COMPILER__n_ /s/b.cu
  LAUNCHER = "/opt/nvfresh" ccache$ 
build gen.o: CUSTOM_COMMAND /s/gen.cu
  COMMAND = cd /b && /usr/local/cuda/bin/nvcc -c /s/gen.cu -o gen.o
  DESC = Generating gen.o
build CMakeFiles/nvfresh_sync | ${cmake_ninja_workdir}CMakeFiles/nvfresh_sync: CUSTOM_COMMAND
  COMMAND = cd /b && /opt/nvfresh sync -C /b
  restat = 1
build k: phony libk.so
)";

std::string read_rules(const std::string& build_dir, const std::string& path)
{
  return build_dir == "/b" && path == "CMakeFiles/rules.ninja" ? k_rules : "";
}

}  // namespace

TEST_CASE("ninja commands: the rule's command expanded with $in, $out and the edge's variables",
          "[build_commands]")
{
  auto commands = parse_ninja_commands(k_build, "/b", read_rules);
  REQUIRE(commands.size() == 5);
  CHECK(commands[0].output == "CMakeFiles/k.dir/a.cu.o");
  CHECK(commands[0].command ==
        "/opt/nvfresh /usr/local/cuda/bin/nvcc -forward-unknown-to-host-compiler -Dk_EXPORTS "
        "--generate-code=arch=compute_80,code=[compute_80,sm_80] -MD -MT CMakeFiles/k.dir/a.cu.o "
        "-MF CMakeFiles/k.dir/a.cu.o.d -x cu -c /s/a.cu -o CMakeFiles/k.dir/a.cu.o");
  CHECK(commands[0].description == "Building CUDA object CMakeFiles/k.dir/a.cu.o");
  CHECK(commands[0].inputs == std::vector<std::string>{"/s/a.cu", ".nvfresh/stamps/1.stamp",
                                                       "cmake_object_order_depends_target_k"});
  CHECK(commands[1].command ==
        "\"/opt/nvfresh\" ccache /usr/local/cuda/bin/nvcc -c /s/b.cu -o CMakeFiles/n.dir/b.cu.o");
  CHECK(commands[2].command == "cd /b && /usr/local/cuda/bin/nvcc -c /s/gen.cu -o gen.o");
  CHECK(commands[2].description == "Generating gen.o");
  CHECK(commands[3].command == "cd /b && /opt/nvfresh sync -C /b");
  CHECK(commands[4].output == "k");
  CHECK(commands[4].command.empty());
}

TEST_CASE("make recipes: each target's recipe lines and prerequisites", "[build_commands]")
{
  constexpr const char* k_make = R"(# comment
CMAKE_COMMAND = /usr/bin/cmake
include CMakeFiles/k.dir/flags.make

CMakeFiles/k.dir/a.cu.o: CMakeFiles/k.dir/flags.make
CMakeFiles/k.dir/a.cu.o: /s/a.cu
CMakeFiles/k.dir/a.cu.o: .nvfresh/stamps/1.stamp
	@$(CMAKE_COMMAND) -E cmake_echo_color --switch=$(COLOR) --green "Building CUDA object CMakeFiles/k.dir/a.cu.o"
	/opt/nvfresh /usr/local/cuda/bin/nvcc $(CUDA_FLAGS) -x cu -c /s/a.cu -o CMakeFiles/k.dir/a.cu.o

cmake_force:
.PHONY : cmake_force
gen.o: /s/gen.cu
	cd /b && /usr/local/cuda/bin/nvcc -c /s/gen.cu -o gen.o
)";
  auto commands = parse_make_recipes(k_make);
  REQUIRE(commands.size() == 2);
  CHECK(commands[0].output == "CMakeFiles/k.dir/a.cu.o");
  CHECK(commands[0].inputs == std::vector<std::string>{"CMakeFiles/k.dir/flags.make", "/s/a.cu",
                                                       ".nvfresh/stamps/1.stamp"});
  CHECK(commands[0].command.find(" && /opt/nvfresh /usr/local/cuda/bin/nvcc $(CUDA_FLAGS)") !=
        std::string::npos);
  CHECK(commands[1].output == "gen.o");
  CHECK(commands[1].command == "cd /b && /usr/local/cuda/bin/nvcc -c /s/gen.cu -o gen.o");
}
