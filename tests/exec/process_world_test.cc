#include "hexplan/exec/process_world.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace hx::exec {
namespace {

TEST(ProcessWorldTest, FactoryIsTheSeamForTheMultiProcessTransport) {
  SetProcessCommunicatorFactory(nullptr);
  EXPECT_FALSE(HasProcessCommunicatorFactory());
  EXPECT_EQ(MakeProcessCommunicator().status().code(), StatusCode::kUnimplemented);
  int calls = 0;
  SetProcessCommunicatorFactory([&]() -> StatusOr<std::unique_ptr<Communicator>> {
    ++calls;
    return Internal("no world here");
  });
  EXPECT_TRUE(HasProcessCommunicatorFactory());
  EXPECT_EQ(MakeProcessCommunicator().status().message(), "no world here");
  EXPECT_EQ(calls, 1);
  SetProcessCommunicatorFactory(nullptr);
}

TEST(ProcessWorldTest, LauncherWorldSizeReadsOpenMpisEnvironment) {
  unsetenv("OMPI_COMM_WORLD_SIZE");
  unsetenv("PMI_SIZE");
  EXPECT_EQ(LauncherWorldSize(), 1);
  setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
  EXPECT_EQ(LauncherWorldSize(), 4);
  setenv("OMPI_COMM_WORLD_SIZE", "four", 1);
  EXPECT_EQ(LauncherWorldSize(), 1);
  unsetenv("OMPI_COMM_WORLD_SIZE");
}

}  // namespace
}  // namespace hx::exec
