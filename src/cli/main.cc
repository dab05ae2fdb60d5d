// hexplan: plans and runs deep-learning inference on heterogeneous hardware.
#include <string>
#include <vector>

#include "cli/cli_app.h"

int main(int argc, char** argv) {
  return hx::cli::RunCli(std::vector<std::string>(argv + 1, argv + argc));
}
