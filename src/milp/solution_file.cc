// Reads solution files that other solvers write for our exported models.
//   Gurobi .sol:  "# Objective value = 30" then "name value" lines.
//   CBC:          "Optimal - objective value 30" then "index name value objcoef" lines.
//   SCIP:         "solution status: ...", "objective value: 30", then "name value (obj:c)" lines.
//   HiGHS:        "Model status" ... "# Columns N" then "name value" lines, then "# Rows"
//   (ignored).
#include <cstdlib>
#include <sstream>
#include <unordered_map>

#include "hexplan/core/file_util.h"
#include "hexplan/milp/solver.h"

namespace hx::milp {
namespace {

bool ParseNumber(const std::string& token, double* out) {
  if (token.empty()) return false;
  char* end = nullptr;
  *out = std::strtod(token.c_str(), &end);
  return end != token.c_str() && *end == '\0';
}

}  // namespace

StatusOr<std::vector<double>> ReadSolutionFile(const std::string& path, const Model& model) {
  HX_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  std::unordered_map<std::string, int> index;
  for (size_t i = 0; i < model.num_vars(); ++i) {
    index.emplace(model.vars()[i].name, static_cast<int>(i));
    index.emplace(ExportName(model.vars()[i].name), static_cast<int>(i));
  }
  std::vector<double> values(model.num_vars(), 0.0);
  std::vector<bool> seen(model.num_vars(), false);

  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  size_t matched = 0;
  bool in_highs_rows = false;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.rfind("# Rows", 0) == 0 || line.rfind("# Dual", 0) == 0) in_highs_rows = true;
    if (line.rfind("# Columns", 0) == 0 || line.rfind("# Primal", 0) == 0) in_highs_rows = false;
    if (in_highs_rows || line.empty() || line[0] == '#') continue;
    if (line.find("Infeasible") != std::string::npos && line_no == 1) {
      return InvalidArgument(path + ":1: the solver reports the model infeasible: " + line);
    }
    std::istringstream tokens(line);
    std::vector<std::string> words;
    for (std::string w; tokens >> w;) words.push_back(w);
    // Skip a leading "**" (CBC marks infeasible values) and a leading column index (CBC).
    size_t k = 0;
    if (k < words.size() && words[k] == "**") ++k;
    for (; k + 1 < words.size(); ++k) {
      auto it = index.find(words[k]);
      if (it == index.end()) continue;
      double v;
      if (!ParseNumber(words[k + 1], &v)) {
        return ParseError(path + ":" + std::to_string(line_no) + ": value of '" + words[k] +
                          "' is not a number: '" + words[k + 1] + "'");
      }
      if (seen[it->second]) {
        return ParseError(path + ":" + std::to_string(line_no) + ": variable '" + words[k] +
                          "' appears twice");
      }
      values[it->second] = v;
      seen[it->second] = true;
      ++matched;
      break;
    }
  }
  if (matched == 0 && model.num_vars() > 0) {
    return ParseError(path + ": no variable of the model was found (expected 'name value' lines " +
                      "as Gurobi, HiGHS, SCIP or CBC write them)");
  }
  return values;
}

}  // namespace hx::milp
